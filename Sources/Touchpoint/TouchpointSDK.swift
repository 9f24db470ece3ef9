import Foundation
import Logging
import TouchpointCore
import TouchpointDelivery
import TouchpointEvents
import TouchpointPromo
import TouchpointStore
import TouchpointSurveys

/// One setup call that wires every module to one collector.
///
/// ```swift
/// @main struct MyApp: App {
///     init() {
///         try? TouchpointSDK.start(writeKey: "wk_live_…", collector: URL(string: "https://collector.example.com")!)
///     }
///     var body: some Scene {
///         WindowGroup {
///             SurveyTriggerView { ContentView() }       // surveys from the collector
///         }
///     }
/// }
/// // anywhere: MoreAppsView(currentAppID: "myapp1")  // the collector's catalog
/// ```
///
/// ``start(writeKey:collector:options:)`` makes, for the collector at `collector`:
/// - **delivery**: the shared ``EventDispatcher`` (``EventDispatcher/start(writeKey:endpoint:recorder:configuration:transport:)``),
///   which sends everything the recorder logs to `POST /v1/batch`;
/// - **surveys**: ``surveys``, a ``SurveyConfigManager`` refreshing `GET /v1/config/surveys` (set as
///   ``SurveyConfigManager/shared``, which `SurveyTriggerView { … }` reads);
/// - **cross-promotion**: ``PromoConfig/defaultCatalogURL`` and ``PromoConfig/defaultCatalogHeaders``
///   point at `GET /v1/config/catalog`, so `MoreAppsView(currentAppID:)` lists the collector's catalog;
/// - **consent** for the remote config and the scenario store: while the user opted out,
///   ``configGate`` is closed, neither the survey config nor the catalog sends a request (they
///   serve what they hold), and the store's backends throw instead of sending;
/// - **the scenario store**: ``storeBackend``, an ``HTTPStoreBackend`` on `/v1/scenario/…` (the
///   namespaces' shared documents), ``storeBackend(for:)`` for a signed-in user's own, and
///   ``makeStore(appID:version:user:)``, a ``DefaultStore`` whose `backend` scopes sync with them;
/// - **the app's lifecycle** (iOS, iPadOS, tvOS, visionOS, Mac Catalyst: UIKit's notifications): in the
///   background the log is flushed, pending events are sent and the session ends (unless
///   ``Options/endsSessionInBackground`` is false; the next session continues the user);
/// - **automatic events** (``Options/automaticEvents``, all on by default): Segment's
///   `Application Installed`, `Application Updated`, `Application Opened` and
///   `Application Backgrounded` (``ApplicationLifecycleRecorder``), and screen views from
///   `.touchpointScreen(_:)` go to its recorder.
///
/// The started SDK speaks Segment's vocabulary: ``identify(userId:traits:)``, ``track(_:properties:)``,
/// ``screen(_:category:properties:)``, ``group(_:traits:)``, ``alias(_:)``, ``reset()``,
/// ``flush()``, and consent with ``optOut(discardingPending:)`` and ``optIn()``.
///
/// Every request carries the write key as HTTP Basic auth. Each module also works on its own, as
/// without this call; the call only creates and connects them. Calling it again replaces the
/// previous setup (which is shut down).
public final class TouchpointSDK: Sendable {
    /// What ``TouchpointSDK/start(writeKey:collector:options:)`` may change from its defaults.
    public struct Options: Sendable {
        /// The recorder every module records into and delivery reads (``EventRecorder/shared``).
        public var recorder: EventRecorder
        /// Delivery's interval, batch limits, retry and debug mode.
        public var delivery: DeliveryConfiguration
        /// The app lifecycle to follow: UIKit's notifications where UIKit exists (not on watchOS
        /// or macOS without Catalyst), nil elsewhere (nothing is observed).
        public var lifecycle: (any AppLifecycle)?
        /// Whether going to the background ends the session (true, as the Replay.IO seed
        /// describes); false keeps it open until the inactivity timeout.
        public var endsSessionInBackground: Bool
        /// The survey config used until the collector's arrives (none by default).
        public var initialSurveys: SurveyConfig
        /// Seconds between checks of the survey config (5 minutes; the answer is usually a `304`).
        public var surveyRefreshInterval: TimeInterval
        /// How requests are sent (one `URLSession` transport shared by every module by default).
        public var transport: any HTTPTransport
        /// The events recorded for the app by themselves (``AutomaticEvents``): installs,
        /// updates, opens and moves to the background, all on by default.
        public var automaticEvents: AutomaticEvents
        /// The app's version and build those events report (the main bundle's by default).
        public var application: ApplicationVersion
        /// Whether nothing is recorded until ``TouchpointSDK/optIn()``, for an app that must ask
        /// first (false by default). The user's choice, once made, wins and is kept.
        public var optedOutByDefault: Bool

        /// Creates the default options.
        public init(
            recorder: EventRecorder = .shared,
            delivery: DeliveryConfiguration = DeliveryConfiguration(),
            lifecycle: (any AppLifecycle)? = TouchpointSDK.platformLifecycle,
            endsSessionInBackground: Bool = true,
            initialSurveys: SurveyConfig = SurveyConfig(),
            surveyRefreshInterval: TimeInterval = 300,
            transport: any HTTPTransport = URLSessionTransport(),
            automaticEvents: AutomaticEvents = .all,
            application: ApplicationVersion = .main,
            optedOutByDefault: Bool = false
        ) {
            self.recorder = recorder
            self.delivery = delivery
            self.lifecycle = lifecycle
            self.endsSessionInBackground = endsSessionInBackground
            self.initialSurveys = initialSurveys
            self.surveyRefreshInterval = surveyRefreshInterval
            self.transport = transport
            self.automaticEvents = automaticEvents
            self.application = application
            self.optedOutByDefault = optedOutByDefault
        }
    }

    /// Why ``TouchpointSDK/start(writeKey:collector:options:)`` refused its arguments.
    public struct SetupError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The argument at fault: `writeKey` or `collector`.
        public let argument: String
        /// What is wrong with it.
        public let reason: String

        public var description: String { "TouchpointSDK.start: \(argument): \(reason)" }
    }

    /// The collector's base URL (no trailing slash).
    public let collector: URL
    /// The source's write key.
    public let writeKey: String
    /// The recorder every module records into.
    public let recorder: EventRecorder
    /// Delivers the recorder's log to the collector; also ``EventDispatcher/shared``.
    public let dispatcher: EventDispatcher
    /// The surveys' config, refreshed from ``surveyConfigURL``; also ``SurveyConfigManager/shared``.
    public let surveys: SurveyConfigManager
    /// The scenario store's backend on the collector for the namespaces' own documents, which
    /// every user shares (read-only from the app; ``storeBackend(for:)`` keeps a user's own).
    public let storeBackend: HTTPStoreBackend
    /// `<collector>/v1/config/surveys`.
    public let surveyConfigURL: URL
    /// `<collector>/v1/config/catalog`, also ``PromoConfig/defaultCatalogURL``.
    public let catalogURL: URL
    /// The write key as the `Authorization` header, for the remote config requests.
    public let headers: TransportHeaders

    /// Records installs, updates, opens and moves to the background (``Options/automaticEvents``).
    public let applicationLifecycle: ApplicationLifecycleRecorder
    /// Closed while the user opted out (``optOut(discardingPending:)``): the survey config and the
    /// promo catalog send no request (a config fetch tells the collector the app is running), and
    /// serve what they hold; the scenario store's backends (``storeBackend``,
    /// ``storeBackend(for:)``) throw without sending. Opened again by ``optIn()``, when the survey
    /// config checks at once.
    public let configGate: RequestGate

    private let consentFollower: ConsentFollower

    private let storeTransport: any HTTPTransport
    private let lifecycleObservation = Locked<AppLifecycleObservation?>(nil)
    let identity: Locked<Identity>
    let identityQueue = DispatchQueue(label: "touchpoint.sdk.identity", qos: .utility)
    let logger = Logger.touchpoint("sdk")
    private static let currentInstance = Locked<TouchpointSDK?>(nil)

    /// The setup the last ``start(writeKey:collector:options:)`` made, or nil before (or after
    /// ``shutdown()``).
    public static var current: TouchpointSDK? { currentInstance.value }

    /// The lifecycle ``Options/lifecycle`` follows by default: UIKit's notifications where UIKit
    /// exists (except watchOS), nil elsewhere.
    public static var platformLifecycle: (any AppLifecycle)? {
        #if canImport(UIKit) && !os(watchOS)
        return UIKitAppLifecycle()
        #else
        return nil
        #endif
    }

    /// Wires every module to the collector at `collector` with one write key; see the type's
    /// documentation for what it sets up.
    /// - Parameters:
    ///   - writeKey: the source's write key (public: it ships inside the app).
    ///   - collector: the collector's base URL, `http` or `https`, e.g. `https://collector.example.com`.
    ///   - options: the recorder, delivery settings, lifecycle and survey defaults.
    /// - Returns: the setup, also ``current``.
    /// - Throws: ``SetupError`` naming the argument when the write key is empty or has a character
    ///   outside printable ASCII, or the collector is not an `http`/`https` URL with a host.
    @discardableResult
    public static func start(writeKey: String, collector: URL, options: Options = Options()) throws(SetupError)
        -> TouchpointSDK
    {
        let sdk = try TouchpointSDK(writeKey: writeKey, collector: collector, options: options)
        let previous = currentInstance.withLock { current in
            defer { current = sdk }
            return current
        }
        if let previous { Task { await previous.stop(clearingDefaults: false) } }
        PromoConfig.defaultCatalogURL = sdk.catalogURL
        PromoConfig.defaultCatalogHeaders = sdk.headers
        PromoConfig.defaultCatalogGate = sdk.configGate
        SurveyConfigManager.shared = sdk.surveys
        return sdk
    }

    private init(writeKey: String, collector: URL, options: Options) throws(SetupError) {
        guard !writeKey.isEmpty else { throw SetupError(argument: "writeKey", reason: "is empty") }
        guard writeKey.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw SetupError(
                argument: "writeKey", reason: "may hold printable ASCII only (no spaces or control characters)")
        }
        let scheme = collector.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", let host = collector.host, !host.isEmpty else {
            throw SetupError(
                argument: "collector",
                reason: "\(collector.absoluteString) is not an http or https URL with a host")
        }
        var base = collector.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        guard let baseURL = URL(string: base), let surveysURL = URL(string: base + "/v1/config/surveys"),
            let catalogURL = URL(string: base + "/v1/config/catalog")
        else {
            throw SetupError(argument: "collector", reason: "\(collector.absoluteString) is not a base URL")
        }
        self.collector = baseURL
        self.writeKey = writeKey
        self.recorder = options.recorder
        self.surveyConfigURL = surveysURL
        self.catalogURL = catalogURL
        headers = ["Authorization": TransportHeaders.basicAuthorization(user: writeKey)]

        if options.optedOutByDefault { options.recorder.setOptedOutByDefault(true) }
        dispatcher = EventDispatcher.start(
            writeKey: writeKey, endpoint: baseURL, recorder: options.recorder, configuration: options.delivery,
            transport: options.transport)
        // Closed while the user opted out: the remote config sends no request.
        configGate = RequestGate(isOpen: !options.recorder.isOptedOut)
        consentFollower = ConsentFollower(gate: configGate)
        options.recorder.addConsumer(consentFollower)
        surveys = SurveyConfigManager(
            initial: options.initialSurveys, recorder: options.recorder, transport: options.transport,
            configuration: RemoteResourceConfiguration(headers: headers, gate: configGate))
        surveys.startAutoRefresh(url: surveysURL, interval: options.surveyRefreshInterval)
        storeBackend = HTTPStoreBackend(
            collector: baseURL, writeKey: writeKey, transport: options.transport, gate: configGate)
        storeTransport = options.transport
        identity = Locked(Identity.load(for: options.recorder))
        ScreenViews.recorder = options.recorder
        let applicationLifecycle = ApplicationLifecycleRecorder(
            recorder: options.recorder, application: options.application, events: options.automaticEvents,
            waitsForActivation: options.lifecycle?.announcesActivation ?? false)
        self.applicationLifecycle = applicationLifecycle

        // The recorder and the dispatcher follow a relay that forwards the app's lifecycle only
        // while this setup lives, so a later setup does not end sessions twice. The automatic
        // events are recorded first: `Application Backgrounded` before the session ends and
        // delivery sends what is pending.
        if let lifecycle = options.lifecycle {
            let relay = ManualAppLifecycle()
            options.recorder.attach(lifecycle: relay, endsSessionInBackground: options.endsSessionInBackground)
            dispatcher.attach(lifecycle: relay)
            let observation = lifecycle.observe { event in
                applicationLifecycle.handle(event)
                relay.send(event)
            }
            lifecycleObservation.withLock { $0 = observation }
        }
        applicationLifecycle.launch(announcedLater: options.lifecycle?.announcesLaunch ?? false)
    }

    /// The scenario store's backend for one signed-in user's own documents on the collector:
    /// `user` carries the id and the signature the app's backend made for it with the source's
    /// identity secret; only that user's requests can read or write them.
    public func storeBackend(for user: HTTPStoreBackend.User) -> HTTPStoreBackend {
        HTTPStoreBackend(
            collector: storeBackend.collector, writeKey: writeKey, user: user, transport: storeTransport,
            gate: configGate)
    }

    /// A store for the app whose `backend(namespace:scenarioID:)` scopes sync with the collector:
    /// the namespaces' shared documents through ``storeBackend`` (read-only), or with `user`, that
    /// user's own (``storeBackend(for:)``).
    /// - Parameters:
    ///   - appID: the app, e.g. its bundle identifier.
    ///   - version: the app's data version.
    ///   - user: the signed-in user whose documents the scopes keep, or nil.
    public func makeStore(
        appID: String, version: SemanticVersion = SemanticVersion(1, 0, 0), user: HTTPStoreBackend.User? = nil
    ) -> DefaultStore {
        let backend = user.map(storeBackend(for:)) ?? storeBackend
        return DefaultStore(appID: appID, version: version, configuration: StoreConfiguration(backend: backend))
    }

    /// A promo configuration for the collector's catalog, as `MoreAppsView(currentAppID:)` uses.
    /// - Parameter currentAppID: this app's id in the catalog (never listed).
    public func promoConfig(currentAppID: String) -> PromoConfig {
        var config = PromoConfig(jsonURL: catalogURL, currentAppID: currentAppID)
        config.resource.headers = headers
        config.resource.gate = configGate
        return config
    }

    /// Stops this setup: the lifecycle is no longer followed, the survey config is no longer
    /// refreshed, delivery stops (what is recorded stays in the log for the next start), and the
    /// defaults it set (``current``, ``PromoConfig/defaultCatalogURL``, ``SurveyConfigManager/shared``,
    /// ``ScreenViews/recorder``) are cleared when they are still this setup's.
    public func shutdown() async {
        let wasCurrent = Self.currentInstance.withLock { current in
            guard current === self else { return false }
            current = nil
            return true
        }
        await stop(clearingDefaults: wasCurrent)
    }

    private func stop(clearingDefaults: Bool) async {
        if clearingDefaults {
            if PromoConfig.defaultCatalogURL == catalogURL {
                PromoConfig.defaultCatalogURL = nil
                PromoConfig.defaultCatalogHeaders = [:]
                PromoConfig.defaultCatalogGate = nil
            }
            if SurveyConfigManager.shared === surveys { SurveyConfigManager.shared = nil }
            if ScreenViews.recorder === recorder { ScreenViews.recorder = .shared }
        }
        let observation = lifecycleObservation.withLock { observation in
            defer { observation = nil }
            return observation
        }
        _ = observation  // released here, outside the lock: the app's lifecycle is no longer followed
        surveys.stopAutoRefresh()
        recorder.removeConsumer(consentFollower)
        await dispatcher.shutdown()
        // The identity is on disk for the next start.
        await withCheckedContinuation { continuation in identityQueue.async { continuation.resume() } }
    }
}

/// Opens and closes the SDK's ``RequestGate`` as the user opts in and out.
final class ConsentFollower: EventConsumer {
    let gate: RequestGate

    init(gate: RequestGate) { self.gate = gate }

    func eventRecorder(_ recorder: EventRecorder, didRecord event: Event, attachment: (any Sendable)?) {}

    func eventRecorder(_ recorder: EventRecorder, didChangeConsent isOptedOut: Bool) {
        // The recorder's state now, not the argument: two changes in a row may be told out of order.
        gate.set(open: !recorder.isOptedOut)
    }
}
