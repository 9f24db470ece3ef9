import Foundation
import Logging

/// How an ``EventRecorder`` manages sessions, durability and disk use.
public struct EventRecorderConfiguration: Sendable {
    /// After this long without an event, the next event starts a new session (default 30 minutes).
    public var sessionTimeout: TimeInterval = 30 * 60
    /// Whether the session ends when the app goes to the background (needs ``EventRecorder/attach(lifecycle:)``).
    public var endsSessionInBackground = false
    /// The log is flushed to stable storage (`fsync`) at most this often while events arrive
    /// (default 1 second), and always at ``EventRecorder/endSession()``.
    public var syncInterval: TimeInterval = 1
    /// Events whose encoded line is larger than this are rejected at record time (default 32 KB,
    /// the Segment limit), logged and counted, never written or sent.
    public var maximumEventBytes = 32 * 1024
    /// While the disk refuses writes, up to this many bytes of events wait in memory (default 1 MB);
    /// beyond it the oldest are dropped and counted.
    public var memoryBufferBytes = 1024 * 1024
    /// How often buffered events are retried while the disk refuses writes (default 2 seconds).
    public var retryInterval: TimeInterval = 2
    /// How each session's `events.jsonl` is written: the mapped segment, how far ahead the file is
    /// allocated off the caller's thread, or no mapping at all (every event a `write(2)`).
    public var logFile = MappedLogFile.Options()
    /// Whether recording starts opted out until ``EventRecorder/optIn()``, for an app that must
    /// not record before the user agrees (default false). Applies while the user has made no
    /// choice; ``EventRecorder/optOut(discardingPending:)`` and ``EventRecorder/optIn()`` are
    /// remembered across launches.
    public var optedOutByDefault = false
    /// What history to keep on disk.
    public var retention: RetentionPolicy = .standard
    /// The source of time for timestamps, timeouts and retention.
    public var clock: any WallClock = SystemClock()
    /// Where the recorder reports problems (write failures, damaged lines, rejected events).
    public var logger: Logger = .touchpoint("events")

    public init() {}
}
