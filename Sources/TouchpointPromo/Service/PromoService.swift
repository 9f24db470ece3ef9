import Foundation
import Logging
import Observation
import TouchpointCore
import TouchpointEvents

/// Loads the catalog, decides which apps to list, and turns what the user sees and taps into
/// events and App Store presentations. The state a "More Apps" view renders.
///
/// Observable with the Observation framework (on every platform, Linux included), and
/// main-actor isolated like the views that read it.
///
/// ```swift
/// let service = PromoService(config: PromoConfig(jsonURL: catalogURL, currentAppID: "myapp1"))
/// await service.loadApps()
/// for app in service.apps { print(app.name, service.tagline(for: app)) }
/// ```
///
/// **Loading** goes network → cache → empty state, through the shared ``RemoteResource`` (ETag,
/// disk cache with a TTL, keep-last-good, cool-down after failures): ``loadApps()`` respects
/// the cache TTL, ``forceRefresh()`` always asks the server. A stale cache is shown when the
/// network fails (``error`` then says why); a catalog entry that breaks a rule is skipped,
/// logged, and listed in ``problems`` while the rest shows.
///
/// **Events.** ``handleAppImpression(_:)`` counts an app once per appearance of its row until
/// ``handleAppDisappear(_:)`` (SwiftUI's `onAppear` / `onDisappear`); ``handleAppTap(_:)``
/// counts every tap and opens the App Store through ``appStorePresenter``. Each event is
/// recorded into ``recorder`` as `promo_impression` / `promo_tap` with `appID` and
/// `currentAppID`, then handed to ``eventDelegate``.
@MainActor
@Observable
public final class PromoService {
    /// The apps to list, in display order: the current app excluded, rules and maximum applied.
    public private(set) var apps: [PromoApp] = []
    /// Whether a load or refresh is in progress.
    public private(set) var isLoading = false
    /// Why the latest load did not bring a fresh catalog; nil after a success. While set,
    /// ``apps`` may still hold the last good catalog (see ``outcome``).
    public private(set) var error: PromoError?
    /// Everything wrong with the current catalog, each with its JSON path (skipped entries,
    /// unknown ids in rules, …). The apps that remain are listed.
    public private(set) var problems: [JSONProblem] = []
    /// Where ``apps`` came from on the latest load: network, fresh or stale cache, or nothing.
    public private(set) var outcome: RemoteResourceOutcome?

    /// The configuration.
    public let config: PromoConfig
    /// The locale taglines are shown in (``PromoConfig/effectiveLocale``).
    public let locale: String
    /// Where `promo_impression` and `promo_tap` are recorded; nil records nothing.
    public let recorder: EventRecorder?
    /// Receives every impression and tap. Held strongly, so an inline handler keeps working.
    @ObservationIgnored public var eventDelegate: (any PromoEventDelegate)?
    /// Shows the App Store when a row is tapped; nil shows nothing (the tap is still counted).
    @ObservationIgnored public var appStorePresenter: (any AppStorePresenter)?

    /// The catalog; nil when the configuration names no usable URL. Internal, so tests can see
    /// loads share its request.
    @ObservationIgnored let resource: RemoteResource<PromoCatalog>?
    @ObservationIgnored private var impressions = PromoImpressionTracker()
    @ObservationIgnored private var loadsInFlight = 0
    @ObservationIgnored private var rotationKey = ""
    @ObservationIgnored private let logger: Logger

    /// Creates a service. Nothing is read or fetched until ``loadApps()``, so creating one is
    /// cheap (SwiftUI may create a view, and with it a service, many times).
    /// - Parameters:
    ///   - config: where the catalog is and how to list it.
    ///   - eventDelegate: receives impressions and taps; held strongly.
    ///   - recorder: where promo events are recorded: ``EventRecorder/shared`` by default, so
    ///     the collector sees click-through per app; nil to record nothing.
    ///   - appStorePresenter: shows the App Store on a tap; `MoreAppsView` passes an `SKOverlay`
    ///     presenter on iOS.
    ///   - transport: how the catalog is fetched; a transport shared by all services by default.
    ///   - clock: the time source for the cache TTL.
    ///   - logger: where catalog problems (skipped entries) and a missing configuration are logged (fetch failures are logged by the `RemoteResource`).
    public init(
        config: PromoConfig,
        eventDelegate: (any PromoEventDelegate)? = nil,
        recorder: EventRecorder? = .shared,
        appStorePresenter: (any AppStorePresenter)? = nil,
        transport: (any HTTPTransport)? = nil,
        clock: any WallClock = SystemClock(),
        logger: Logger = Logger.touchpoint("promo")
    ) {
        self.config = config
        self.logger = logger
        self.locale = config.effectiveLocale
        self.recorder = recorder
        self.eventDelegate = eventDelegate
        self.appStorePresenter = appStorePresenter
        let scheme = config.jsonURL.scheme?.lowercased()
        if config.isCatalogURLSet && (scheme == "http" || scheme == "https") {
            let directory =
                config.cacheDirectory
                ?? (recorder?.directory ?? EventRecorder.defaultDirectory).appendingPathComponent("cache")
            resource = RemoteResource(
                url: config.jsonURL,
                cacheDirectory: directory.path,
                cacheName: "promo-catalog-" + StableHash.hex(of: config.jsonURL.absoluteString),
                transport: transport ?? Self.sharedTransport,
                configuration: config.resource,
                clock: clock,
                decodeJSON: { json in try PromoCatalog(json: json) }
            )
        } else {
            resource = nil
        }
    }

    private static let sharedTransport = URLSessionTransport()

    // MARK: Loading

    /// Loads the catalog: from the cache while it is younger than the TTL, else from the
    /// network, else the last good cache, else nothing. Shows a cached list at once while the
    /// network is asked.
    public func loadApps() async { await load(force: false) }

    /// Fetches the catalog from the network now, whatever the cache TTL (pull to refresh). A
    /// failure keeps the current list.
    public func forceRefresh() async { await load(force: true) }

    private func load(force: Bool) async {
        guard let resource else {
            let message =
                config.isCatalogURLSet
                ? "the catalog URL must be http or https: \(config.jsonURL.absoluteString)"
                : "no catalog URL: set PromoConfig.defaultCatalogURL at launch, or pass a PromoConfig"
            error = PromoError(code: .notConfigured, message: message)
            logger.error("promo catalog not configured", metadata: ["reason": "\(message)"])
            return
        }
        loadsInFlight += 1
        isLoading = true
        rotationKey = await resolveRotationKey()
        if apps.isEmpty, let cached = resource.value { show(cached) }
        let snapshot = force ? await resource.forceRefresh() : await resource.refresh()
        apply(snapshot)
        loadsInFlight -= 1
        isLoading = loadsInFlight > 0
    }

    /// The id the rotation sticks to: the configured user, the recorder's user, its install id.
    private func resolveRotationKey() async -> String {
        if let userID = config.userID { return userID }
        guard let recorder else { return "" }
        if let userID = await recorder.currentSession()?.userId { return userID }
        return recorder.anonymousId
    }

    // Assigning an equal value notifies no observer (the Observation macro compares
    // Equatable values), so a reload that changes nothing redraws nothing.
    private func apply(_ snapshot: RemoteResourceSnapshot<PromoCatalog>) {
        outcome = snapshot.outcome
        error = snapshot.lastError.map(PromoError.init)
        if let catalog = snapshot.value {
            show(catalog)
        } else {
            apps = []
            problems = []
            impressions.keepOnly([])
        }
    }

    private func show(_ catalog: PromoCatalog) {
        let selection = PromoSelection(
            currentAppID: config.currentAppID, maximumApps: config.maximumApps, rotationKey: rotationKey)
        let listed = selection.apps(from: catalog)
        apps = listed
        impressions.keepOnly(Set(listed.map(\.id)))
        guard catalog.problems != problems else { return }
        problems = catalog.problems
        for problem in catalog.problems {
            logger.warning(
                "promo catalog problem",
                metadata: ["url": "\(config.jsonURL.absoluteString)", "problem": "\(problem)"])
        }
    }

    // MARK: Display

    /// Which of the four UI states to show: rows when there are any (even stale ones), else a
    /// progress indicator until the first load ends, else the error, else nothing.
    public var displayState: PromoDisplayState {
        if !apps.isEmpty { return .loaded }
        if isLoading || (outcome == nil && error == nil) { return .loading }
        if let error { return .error(error) }
        return .empty
    }

    /// The app's tagline in ``locale``: the locale, its language, English, then any.
    public func tagline(for app: PromoApp) -> String { app.tagline(for: locale) }

    // MARK: Interaction

    /// Call when an app's row appears (SwiftUI's `onAppear`): counts an impression unless the
    /// row is already visible, so redraws do not count again.
    /// - Parameter app: the app whose row appeared.
    public func handleAppImpression(_ app: PromoApp) {
        guard impressions.appeared(app.id) else { return }
        emit(.impression(appID: app.id))
    }

    /// Call when an app's row disappears (SwiftUI's `onDisappear`): its next appearance counts
    /// as a new impression.
    /// - Parameter app: the app whose row disappeared.
    public func handleAppDisappear(_ app: PromoApp) {
        impressions.disappeared(app.id)
    }

    /// Call when the user taps an app's row: counts the tap and opens the App Store for it
    /// through ``appStorePresenter``, with the configured attribution tokens.
    /// - Parameter app: the tapped app.
    public func handleAppTap(_ app: PromoApp) {
        emit(.tap(appID: app.id))
        let request = AppStoreRequest(
            appStoreID: app.appStoreID,
            appID: app.id,
            currentAppID: config.currentAppID,
            providerToken: config.providerToken,
            campaignToken: config.campaignToken)
        guard let appStorePresenter else {
            logger.notice(
                "no App Store presenter; the tap was counted but nothing was shown", metadata: ["appID": "\(app.id)"])
            return
        }
        appStorePresenter.presentAppStore(request)
    }

    private func emit(_ event: PromoEvent) {
        recorder?.record(
            event.name,
            properties: ["appID": .string(event.appID), "currentAppID": .string(config.currentAppID)])
        eventDelegate?.promoService(self, didEmit: event)
    }
}
