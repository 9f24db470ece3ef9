import Logging
import TouchpointCore

/// What a ``DefaultStore`` shares with its scoped stores: the app, its current version, the
/// configuration, the logger and the problem log.
final class StoreContext: Sendable {
    let appID: String
    let configuration: StoreConfiguration
    let logger = Logger.touchpoint("store")
    private let state: Locked<(version: SemanticVersion, problems: [StoreError])>

    static let problemLimit = 50

    init(appID: String, version: SemanticVersion, configuration: StoreConfiguration) {
        self.appID = appID
        self.configuration = configuration
        self.state = Locked((version, []))
    }

    var version: SemanticVersion {
        get { state.withLock { $0.version } }
        set { state.withLock { $0.version = newValue } }
    }

    var problems: [StoreError] { state.withLock { $0.problems } }

    /// Logs a problem, keeps it in the bounded problem list and hands it to `onProblem`.
    func report(_ problem: StoreError, level: Logger.Level = .error) {
        logger.log(level: level, "\(problem)", metadata: ["code": "\(problem.code)"])
        state.withLock { state in
            state.problems.append(problem)
            if state.problems.count > Self.problemLimit { state.problems.removeFirst() }
        }
        configuration.onProblem?(problem)
    }
}
