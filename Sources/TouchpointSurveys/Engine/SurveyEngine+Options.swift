import Foundation
import Logging
import TouchpointCore

extension SurveyEngine {
    /// How an engine keeps time, where it keeps its gating files, and where it logs.
    public struct Options: Sendable {
        /// The time source for gating decisions (a `ManualClock` in tests).
        public var clock: any WallClock
        /// The directory of the gating files; nil for `<recorder.directory>/state/surveys`.
        public var stateDirectory: String?
        /// Waits out a survey's `delaySeconds` (by default `Task.sleep`); tests pass a wait they
        /// control. It should return early when its task is cancelled.
        public var wait: @Sendable (TimeInterval) async -> Void
        /// Where the engine reports dropped surveys, corrupt gating files and presentations.
        public var logger: Logger

        /// Creates options.
        /// - Parameters:
        ///   - clock: the time source.
        ///   - stateDirectory: the gating files' directory, or nil for the recorder's.
        ///   - wait: how a delay is waited out.
        ///   - logger: where to log.
        public init(
            clock: any WallClock = SystemClock(),
            stateDirectory: String? = nil,
            wait: @escaping @Sendable (TimeInterval) async -> Void = SurveyEngine.sleep,
            logger: Logger = .touchpoint("surveys")
        ) {
            self.clock = clock
            self.stateDirectory = stateDirectory
            self.wait = wait
            self.logger = logger
        }
    }

    /// Sleeps for `seconds` (at most a day), returning early when cancelled.
    public static let sleep: @Sendable (TimeInterval) async -> Void = { seconds in
        let bounded = min(max(seconds, 0), 86_400)
        try? await Task.sleep(nanoseconds: UInt64(bounded * 1_000_000_000))
    }
}
