import Foundation
import Logging
import Touchpoint

/// `touchpoint demo`'s simulation: simulated users run a small shop app through the real SDK and
/// deliver what they did to a collector.
///
/// Each user is one device with its own `EventRecorder` directory. Per session the app triggers
/// typed events through a `GlobalTracker` (with ``DemoAdapter``), keeps the cart in a
/// `DefaultStore` scope whose total is a live expression, records `checkout_success` and
/// `article_read`, which a `SurveyEngine` fed by the collector's `/v1/config/surveys` turns into
/// surveys (answered by ``DemoSurveyPresenter``), and shows the "more apps" list of a
/// `PromoService` fed by `/v1/config/catalog` (impressions and some taps). An `EventDispatcher`
/// then delivers the device's log to the collector.
struct DemoSimulation: Sendable {
    /// What the simulation did.
    struct Report: Sendable, Hashable {
        var users = 0
        var sessions = 0
        var eventsDelivered = 0
        var storedSurveyConfig = false
        var storedCatalog = false
        var adapterDeliveries = 0
    }

    /// The collector's base URL.
    var collector: URL
    var writeKey: String
    /// Lets the demo store its survey config and catalog when the collector has none.
    var adminToken: String?
    var users: Int
    var seed: UInt64
    var interactive: Bool
    /// Where the simulated devices keep their logs (one directory per user).
    var directory: URL
    /// Progress lines; nil prints nothing.
    var write: (@Sendable (String) -> Void)?
    /// The SDK's log level (its info lines would drown the demo's own output).
    var logLevel: Logger.Level = .warning

    /// A logger for one SDK component at ``logLevel``.
    private func logger(_ component: String) -> Logger {
        var logger = Logger.touchpoint(component)
        logger.logLevel = logLevel
        return logger
    }

    func run() async throws -> Report {
        var report = Report()
        let transport = URLSessionTransport()
        report.storedSurveyConfig = try await ensureConfig("surveys", DemoContent.surveyConfig, transport: transport)
        report.storedCatalog = try await ensureConfig("catalog", DemoContent.catalog, transport: transport)
        var random = SeededRandomNumberGenerator(seed: seed)
        for index in 0..<users {
            let user = String(format: "user-%02d", index + 1)
            let sessions = try await simulateUser(user, index: index, random: &random, transport: transport)
            report.users += 1
            report.sessions += sessions.sessions
            report.eventsDelivered += sessions.delivered
            report.adapterDeliveries += sessions.adapter
        }
        return report
    }

    // MARK: Config

    /// Stores `body` as the collector's `kind` config unless it has one.
    /// - Returns: whether it was stored now.
    private func ensureConfig(_ kind: String, _ body: String, transport: any HTTPTransport) async throws -> Bool {
        let url = configURL(kind)
        let existing = try await transport.send(TransportRequest(url: url))
        if existing.isSuccess { return false }
        guard existing.status == 404 else {
            throw DemoError(
                "GET \(url.path): HTTP \(existing.status) \(String(decoding: existing.body, as: UTF8.self))")
        }
        guard let adminToken else {
            write?("The collector has no \(kind) config and no --admin-token was given to store the demo's.\n")
            return false
        }
        var put = URLComponents(
            url: collector.appendingPathComponent("v1/config/\(kind)"), resolvingAgainstBaseURL: false)!
        put.query = nil
        let response = try await transport.send(
            TransportRequest(
                method: .put, url: put.url!,
                headers: TransportHeaders([
                    ("Authorization", "Bearer \(adminToken)"), ("Content-Type", "application/json"),
                ]),
                body: Array(body.utf8)))
        guard response.isSuccess else {
            throw DemoError(
                "PUT /v1/config/\(kind): HTTP \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
        write?("Stored the demo's \(kind) config in the collector.\n")
        return true
    }

    private func configURL(_ kind: String) -> URL {
        var components = URLComponents(
            url: collector.appendingPathComponent("v1/config/\(kind)"), resolvingAgainstBaseURL: false)!
        // `URLQueryItem` leaves a `+` as it is, which a query reads as a space: every byte but
        // letters and digits escaped.
        components.percentEncodedQueryItems = [
            URLQueryItem(
                name: "writeKey", value: writeKey.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        ]
        return components.url!
    }

    // MARK: One user

    private func simulateUser(
        _ user: String, index: Int, random: inout SeededRandomNumberGenerator, transport: any HTTPTransport
    ) async throws -> (sessions: Int, delivered: Int, adapter: Int) {
        let device = directory.appendingPathComponent(user, isDirectory: true)
        // The user's first visit began 20 minutes to 3 hours ago.
        let clock = DemoClock(start: Date().addingTimeInterval(-Double(Int.random(in: 1200...10_800, using: &random))))
        var recorderConfiguration = EventRecorderConfiguration()
        recorderConfiguration.clock = clock
        recorderConfiguration.logger = logger("events")
        let recorder = EventRecorder(directory: device, configuration: recorderConfiguration)
        var trackerConfiguration = GlobalTrackerConfiguration()
        trackerConfiguration.logger = logger("routing")
        let tracker = GlobalTracker(recorder: recorder, configuration: trackerConfiguration)
        let adapter = DemoAdapter()
        tracker.startTracking(adapters: [adapter])

        let manager = SurveyConfigManager(
            initial: SurveyConfig(), recorder: recorder, transport: transport, logger: logger("surveys"),
            notificationQueue: nil)
        let snapshot = await manager.refresh(url: configURL("surveys"))
        if let error = snapshot.lastError { write?("\(user): survey config not loaded: \(error)\n") }
        let presenter = DemoSurveyPresenter(seed: seed &+ UInt64(index) &* 7919, interactive: interactive)
        let engine = SurveyEngine(
            manager: manager, recorder: recorder, presenter: presenter,
            options: SurveyEngine.Options(clock: clock, logger: logger("surveys")))

        let store = DefaultStore(appID: "com.touchpoint.demo")
        let appID = DemoContent.apps[index % DemoContent.apps.count]
        let sessionCount = Int.random(in: 1...2, using: &random)
        for session in 0..<sessionCount {
            if session > 0 { clock.advance(by: Double(Int.random(in: 60...1800, using: &random))) }
            _ = await recorder.startSession(userID: user)
            let cart = store.scoped(.scenarioSession(id: "cart-\(user)"))
            simulateSession(
                user: user, appID: appID, tracker: tracker, recorder: recorder, cart: cart, clock: clock,
                random: &random)
            await engine.waitUntilIdle()
            await presenter.waitForAnswers()
            await engine.waitUntilIdle()
            clock.advance(by: Double(Int.random(in: 5...40, using: &random)))
            try await showMoreApps(appID: appID, user: user, recorder: recorder, random: &random)
            store.endScenario(id: "cart-\(user)")
            await recorder.endSession()
        }
        engine.stop()
        _ = await tracker.waitUntilDelivered(timeout: .seconds(10))
        tracker.stopTracking()

        var configuration = DeliveryConfiguration()
        configuration.dispatchInterval = -1
        configuration.reachability = nil
        configuration.maximumRequestsPerMinute = nil
        configuration.logger = logger("delivery")
        let dispatcher = EventDispatcher(
            destination: DeliveryDestination(endpoint: collector, writeKey: writeKey), recorder: recorder,
            configuration: configuration, transport: transport)
        let delivered: DispatchReport
        do {
            delivered = try await dispatcher.dispatch(timeout: 60)
        } catch {
            await dispatcher.shutdown()
            throw error
        }
        await dispatcher.shutdown()
        write?(
            "\(user): \(sessionCount) session\(sessionCount == 1 ? "" : "s"), \(delivered.deliveredEvents) events "
                + "delivered, \(adapter.count) routed to the \(adapter.name) adapter\n")
        return (sessionCount, delivered.deliveredEvents, adapter.count)
    }

    /// One visit: typed events through the tracker, a cart in the store, a checkout, maybe an article.
    private func simulateSession(
        user: String, appID: String, tracker: GlobalTracker, recorder: EventRecorder, cart: ScopedStore,
        clock: DemoClock, random: inout SeededRandomNumberGenerator
    ) {
        // A few seconds between one tap and the next.
        func pause() { clock.advance(by: Double(Int.random(in: 3...40, using: &random))) }
        tracker.trigger(DemoContent.Events.AppOpened(appID: appID))
        for _ in 0..<Int.random(in: 2...5, using: &random) {
            pause()
            let screen = DemoContent.screens.randomElement(using: &random) ?? "home"
            tracker.trigger(DemoContent.Events.ScreenViewed(screen: screen))
        }
        cart.registerLiveExpression(
            LiveExpression(id: "total", outputKeyPath: "total", dependsOn: ["items[*].price"]) { get in
                .number(get("items[*].price")?.arrayValue?.compactMap(\.doubleValue).reduce(0, +) ?? 0)
            })
        var items: [StoreValue] = []
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            pause()
            let product = DemoContent.products.randomElement(using: &random) ?? DemoContent.products[0]
            items.append(.object(["title": .string(product.title), "price": .number(product.price)]))
            cart.set("items", .array(items))
            recorder.record(
                "add_to_cart", properties: ["product": .string(product.title), "price": .double(product.price)])
        }
        let total = cart.get("total")?.doubleValue ?? 0
        pause()
        if Int.random(in: 0..<4, using: &random) > 0 {
            recorder.record(
                "checkout_success", properties: ["amount": .double(total), "items": .int(items.count)])
        }
        pause()
        if Int.random(in: 0..<2, using: &random) == 0 {
            recorder.record("article_read", properties: ["minutes": .int(Int.random(in: 1...8, using: &random))])
        }
    }

    /// The "more apps" list: an impression per listed app, a tap now and then.
    @MainActor
    private func showMoreApps(
        appID: String, user: String, recorder: EventRecorder, random: inout SeededRandomNumberGenerator
    ) async throws {
        let service = PromoService(
            config: PromoConfig(
                jsonURL: configURL("catalog"), currentAppID: appID, userID: user,
                resource: RemoteResourceConfiguration(cacheTTL: 0)),
            recorder: recorder, logger: logger("promo"))
        await service.loadApps()
        for app in service.apps {
            service.handleAppImpression(app)
            if Int.random(in: 0..<4, using: &random) == 0 { service.handleAppTap(app) }
        }
    }
}

/// Why the demo could not go on.
struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
