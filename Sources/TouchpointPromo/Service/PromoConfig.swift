import Foundation
import TouchpointCore

/// How a ``PromoService`` (and `MoreAppsView`) finds the catalog and shapes the list.
///
/// ```swift
/// let config = PromoConfig(
///     jsonURL: URL(string: "https://your-domain.com/apps.json")!,
///     currentAppID: "myapp1"
/// )
/// ```
///
/// **The default catalog URL.** `MoreAppsView(currentAppID:)` and ``init(currentAppID:)`` read
/// ``defaultCatalogURL``; set it once at launch, before the first view appears:
///
/// ```swift
/// @main struct MyApp: App {
///     init() { PromoConfig.defaultCatalogURL = URL(string: "https://your-domain.com/apps.json") }
///     …
/// }
/// ```
///
/// Without it, such a service shows the empty state and reports ``PromoError/Code/notConfigured``.
public struct PromoConfig: Sendable, Hashable {
    /// The catalog's URL (`http` or `https`). The collector serves one at
    /// `/v1/config/catalog`; put its write key in ``resource``'s headers.
    public var jsonURL: URL
    /// This app's id in the catalog: it is never listed, and its `promoRules` entry applies.
    public var currentAppID: String
    /// The user's locale for taglines (e.g. `pt-BR`); nil uses the device's first preferred
    /// language.
    public var locale: String?
    /// The id the weighted rotation sticks to; nil uses the recorder's current user, else its
    /// install id (the anonymous id).
    public var userID: String?
    /// The most apps to show, overriding the catalog's `maxApps`; nil defers to the catalog.
    public var maximumApps: Int?
    /// The App Store provider token for campaign attribution, passed to the overlay.
    public var providerToken: String?
    /// The App Store campaign token for campaign attribution, passed to the overlay.
    public var campaignToken: String?
    /// Where the catalog's cache file goes; nil uses the recorder's `<directory>/cache` (or the
    /// default Touchpoint directory's when there is no recorder).
    public var cacheDirectory: URL?
    /// Cache TTL, request timeout, cool-down after failures and extra headers (the write key
    /// for the collector). The TTL defaults to one hour: a catalog changes rarely.
    public var resource: RemoteResourceConfiguration

    /// Creates a configuration.
    /// - Parameters:
    ///   - jsonURL: the catalog's URL.
    ///   - currentAppID: this app's id in the catalog.
    ///   - locale: the tagline locale; nil for the device's.
    ///   - userID: the rotation's sticky id; nil for the recorder's user or install id.
    ///   - maximumApps: the most apps to show; nil for the catalog's `maxApps`.
    ///   - providerToken: the App Store provider token.
    ///   - campaignToken: the App Store campaign token.
    ///   - cacheDirectory: where the cache file goes; nil for the recorder's `cache/`.
    ///   - resource: how the catalog is fetched and cached.
    public init(
        jsonURL: URL,
        currentAppID: String,
        locale: String? = nil,
        userID: String? = nil,
        maximumApps: Int? = nil,
        providerToken: String? = nil,
        campaignToken: String? = nil,
        cacheDirectory: URL? = nil,
        resource: RemoteResourceConfiguration = RemoteResourceConfiguration(cacheTTL: 3600)
    ) {
        self.jsonURL = jsonURL
        self.currentAppID = currentAppID
        self.locale = locale
        self.userID = userID
        self.maximumApps = maximumApps
        self.providerToken = providerToken
        self.campaignToken = campaignToken
        self.cacheDirectory = cacheDirectory
        self.resource = resource
    }

    /// A configuration for ``defaultCatalogURL``, as `MoreAppsView(currentAppID:)` makes.
    /// When no default is set, ``jsonURL`` is a placeholder and loading reports
    /// ``PromoError/Code/notConfigured``.
    /// - Parameter currentAppID: this app's id in the catalog.
    public init(currentAppID: String) {
        let defaults = Self.defaults.value
        self.init(jsonURL: defaults.url ?? Self.unsetCatalogURL, currentAppID: currentAppID)
        resource.headers = defaults.headers
        resource.gate = defaults.gate
    }

    /// The catalog URL used by ``init(currentAppID:)``; set it once at launch (the setup call
    /// `TouchpointSDK.start(writeKey:collector:)` sets it to the collector's catalog). Safe to read
    /// and write from any thread.
    public static var defaultCatalogURL: URL? {
        get { defaults.value.url }
        set { defaults.withLock { $0.url = newValue } }
    }

    /// Header fields ``init(currentAppID:)`` puts in ``resource``: the collector's write key as
    /// `Authorization`, say. Empty by default; the setup call sets it with ``defaultCatalogURL``.
    public static var defaultCatalogHeaders: TransportHeaders {
        get { defaults.value.headers }
        set { defaults.withLock { $0.headers = newValue } }
    }

    /// The gate ``init(currentAppID:)`` puts in ``resource``: closed while the user opted out, so
    /// the catalog is served from the cache without a request. Nil by default; the setup call sets
    /// it with ``defaultCatalogURL``.
    public static var defaultCatalogGate: RequestGate? {
        get { defaults.value.gate }
        set { defaults.withLock { $0.gate = newValue } }
    }

    /// Whether ``jsonURL`` is the placeholder of an unset ``defaultCatalogURL``.
    public var isCatalogURLSet: Bool { jsonURL != Self.unsetCatalogURL }

    private static let defaults = Locked<(url: URL?, headers: TransportHeaders, gate: RequestGate?)>((nil, [:], nil))
    static let unsetCatalogURL = URL(string: "touchpoint-promo:default-catalog-url-not-set")!

    /// The locale taglines are chosen for: ``locale``, else the device's first preferred language.
    public var effectiveLocale: String {
        locale ?? Locale.preferredLanguages.first ?? Locale.current.identifier
    }
}
