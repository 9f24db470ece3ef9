import Foundation
import Logging
import TouchpointCore
import TouchpointEvents

extension EventDispatcher {
    private static let sharedInstance = Locked<EventDispatcher?>(nil)

    /// The dispatcher the class-level methods use: the one ``start(writeKey:endpoint:recorder:configuration:transport:)``
    /// created, or nil before.
    public static var shared: EventDispatcher? { sharedInstance.value }

    /// Creates the shared dispatcher and starts delivering: `trackWithAPIKey:` of the seed.
    ///
    /// Calling it again replaces the shared dispatcher (the previous one is shut down).
    /// - Parameters:
    ///   - writeKey: the source's write key.
    ///   - endpoint: the collector's base URL (or its `/v1/batch` URL).
    ///   - recorder: the recorder whose log is delivered (``EventRecorder/shared`` by default).
    ///   - configuration: interval, limits, compression, retry, rate limit, debug mode.
    ///   - transport: how requests are sent.
    /// - Returns: the new shared dispatcher.
    @discardableResult
    public static func start(
        writeKey: String,
        endpoint: URL,
        recorder: EventRecorder = .shared,
        configuration: DeliveryConfiguration = DeliveryConfiguration(),
        transport: any HTTPTransport = URLSessionTransport()
    ) -> EventDispatcher {
        let dispatcher = EventDispatcher(
            writeKey: writeKey, endpoint: endpoint, recorder: recorder, configuration: configuration,
            transport: transport)
        let previous = sharedInstance.withLock { shared in
            defer { shared = dispatcher }
            return shared
        }
        if let previous { Task { await previous.shutdown() } }
        return dispatcher
    }

    /// ``track(_:distinctId:properties:)`` on the shared dispatcher; nil (and an error logged)
    /// before ``start(writeKey:endpoint:recorder:configuration:transport:)``.
    @discardableResult
    public static func track(
        _ name: String, distinctId: String? = nil, properties: [String: EventValue] = [:]
    ) async -> Event? {
        guard let shared = started("track") else { return nil }
        return await shared.track(name, distinctId: distinctId, properties: properties)
    }

    /// ``updateTraits(distinctId:traits:)`` on the shared dispatcher; nil before start.
    @discardableResult
    public static func updateTraits(distinctId: String, traits: [String: EventValue]) async -> Event? {
        guard let shared = started("updateTraits") else { return nil }
        return await shared.updateTraits(distinctId: distinctId, traits: traits)
    }

    /// ``setDebugMode(_:)`` on the shared dispatcher.
    public static func setDebugMode(_ on: Bool) { started("setDebugMode")?.setDebugMode(on) }

    /// ``enable()`` on the shared dispatcher.
    public static func enable() { started("enable")?.enable() }

    /// ``disable()`` on the shared dispatcher.
    public static func disable() { started("disable")?.disable() }

    /// ``setDispatchInterval(_:)`` on the shared dispatcher.
    public static func setDispatchInterval(_ interval: TimeInterval) {
        started("setDispatchInterval")?.setDispatchInterval(interval)
    }

    /// ``dispatch(timeout:failFast:)`` on the shared dispatcher.
    /// - Throws: ``DeliveryError/Code/notStarted`` before start, or what the instance method throws.
    @discardableResult
    public static func dispatch(timeout: TimeInterval? = nil, failFast: Bool = false) async throws -> DispatchReport {
        guard let shared else {
            throw DeliveryError(code: .notStarted, reason: "EventDispatcher.start(writeKey:endpoint:) was not called")
        }
        return try await shared.dispatch(timeout: timeout, failFast: failFast)
    }

    private static func started(_ method: String) -> EventDispatcher? {
        guard let shared else {
            Logger.touchpoint("delivery").error(
                "EventDispatcher.\(method) called before EventDispatcher.start(writeKey:endpoint:); ignored")
            return nil
        }
        return shared
    }
}
