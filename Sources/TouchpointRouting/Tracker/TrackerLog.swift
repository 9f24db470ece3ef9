import Logging
import TouchpointCore
import TouchpointEvents

/// Where a tracker's messages go: its handler (at its level) and swift-log.
final class TrackerLog: Sendable {
    let logger: Logger
    private let settings: Locked<Settings>

    struct Settings {
        var level = GlobalTracker.LoggingLevel.none
        var handler: @Sendable (String) -> Void = { print($0) }
    }

    init(logger: Logger) {
        self.logger = logger
        settings = Locked(Settings())
    }

    var level: GlobalTracker.LoggingLevel {
        get { settings.withLock { $0.level } }
        set { settings.withLock { $0.level = newValue } }
    }

    func setHandler(_ handler: @escaping @Sendable (String) -> Void) {
        settings.withLock { $0.handler = handler }
    }

    /// The level and handler, read once per batch.
    var current: Settings { settings.value }

    /// Reports a problem at `.info` and above, and to swift-log at `severity`.
    func problem(_ message: String, severity: Logger.Level) {
        logger.log(level: severity, "\(message)")
        let settings = current
        if settings.level >= .info { settings.handler(message) }
    }

    // MARK: Formats

    static func eventTriggered(adapter: String, event: Event, level: GlobalTracker.LoggingLevel) -> String {
        var message = "-[\(adapter)]: EVENT TRIGGERED - '\(event.name)'"
        if level >= .verbose {
            for key in event.properties.keys.sorted() {
                message += "\n > \(key): \(render(event.properties[key]!))"
            }
        }
        return message
    }

    static func propertyUpdated(
        adapter: String, identifier: String, value: EventValue, level: GlobalTracker.LoggingLevel
    ) -> String {
        var message = "-[\(adapter)]: PROPERTY UPDATED - '\(identifier)'"
        if level >= .verbose { message += "\n > value: \(render(value))" }
        return message
    }

    static func eventFailed(adapter: String, name: String, error: any Error) -> String {
        "-[\(adapter)]: EVENT FAILED - '\(name)' - \(error)"
    }

    static func propertyFailed(adapter: String, identifier: String, error: any Error) -> String {
        "-[\(adapter)]: PROPERTY FAILED - '\(identifier)' - \(error)"
    }

    static func reset(adapter: String) -> String {
        "-[\(adapter)]: RESET - the user was forgotten"
    }

    static func resetFailed(adapter: String, error: any Error) -> String {
        "-[\(adapter)]: RESET FAILED - \(error)"
    }

    static func configureFailed(adapter: String, error: any Error) -> String {
        "-[\(adapter)]: CONFIGURE FAILED - \(error)"
    }

    static func valueNotRecorded(event: String, problem: JSONProblem) -> String {
        "-[GlobalTracker]: VALUE NOT RECORDED - '\(event)' - \(problem)"
    }

    /// A string as it is, anything else as compact JSON with sorted keys.
    static func render(_ value: EventValue) -> String {
        if case .string(let text) = value { return text }
        return value.jsonString(sortedKeys: true)
    }
}
