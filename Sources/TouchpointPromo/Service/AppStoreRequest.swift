import Foundation

/// What to show in the App Store for a tapped app: its product and the campaign attribution.
public struct AppStoreRequest: Sendable, Hashable {
    /// The App Store's numeric id of the app to show.
    public var appStoreID: String
    /// The promoted app's catalog id.
    public var appID: String
    /// The promoting app's catalog id.
    public var currentAppID: String
    /// The provider token for campaign attribution (`SKOverlay.AppConfiguration.providerToken`).
    public var providerToken: String?
    /// The campaign token for campaign attribution (`SKOverlay.AppConfiguration.campaignToken`).
    public var campaignToken: String?

    /// Creates a request.
    public init(
        appStoreID: String,
        appID: String,
        currentAppID: String,
        providerToken: String? = nil,
        campaignToken: String? = nil
    ) {
        self.appStoreID = appStoreID
        self.appID = appID
        self.currentAppID = currentAppID
        self.providerToken = providerToken
        self.campaignToken = campaignToken
    }

    /// The app's App Store web page, with the attribution tokens as `pt` and `ct`, for
    /// platforms without an in-app overlay.
    public var webURL: URL {
        var components = URLComponents()
        components.scheme = "https"
        components.host = "apps.apple.com"
        components.path = "/app/id" + appStoreID
        var query: [URLQueryItem] = []
        if let providerToken { query.append(URLQueryItem(name: "pt", value: providerToken)) }
        if let campaignToken { query.append(URLQueryItem(name: "ct", value: campaignToken)) }
        components.queryItems = query.isEmpty ? nil : query
        return components.url!
    }
}
