import Foundation

/// Why delivery could not do what was asked: a dispatch that could not finish, a state file
/// that could not be read.
///
/// The ``code`` is stable; ``reason`` says what happened and where (the endpoint, the file,
/// the collector's answer).
///
/// ```
/// collectorUnavailable: http://127.0.0.1:8080/v1/batch answered 503: busy; next attempt at 2026-11-22T05:40:12.345Z
/// ```
public struct DeliveryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, stable across releases.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case disabled
            case optedOut
            case timedOut
            case cancelled
            case collectorUnavailable
            case offline
            case corruptState
            case notStarted
            case shutDown
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// Delivery is disabled (``EventDispatcher/disable()``).
        public static let disabled = Code(.disabled)
        /// The user opted out of recording (``EventRecorder/optOut(discardingPending:)``): nothing is sent.
        public static let optedOut = Code(.optedOut)
        /// The events were not all acknowledged within the time the caller allowed.
        public static let timedOut = Code(.timedOut)
        /// The waiting task was cancelled.
        public static let cancelled = Code(.cancelled)
        /// The collector failed (an error status, no answer) or is cooling down after failures,
        /// and the caller asked not to wait it out.
        public static let collectorUnavailable = Code(.collectorUnavailable)
        /// The device is offline, and the caller asked not to wait.
        public static let offline = Code(.offline)
        /// The delivery state file is unreadable; delivery started over from the start of the log.
        public static let corruptState = Code(.corruptState)
        /// A class-level method was called before ``EventDispatcher/start(writeKey:endpoint:recorder:configuration:transport:)``.
        public static let notStarted = Code(.notStarted)
        /// The dispatcher was shut down while the caller waited.
        public static let shutDown = Code(.shutDown)

        /// The code's name, e.g. `collectorUnavailable`.
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// What happened, in words.
    public let reason: String

    /// Creates an error.
    public init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }
}
