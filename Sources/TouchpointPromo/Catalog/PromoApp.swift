import Foundation

/// One app of the catalog: what a "More Apps" row shows and what a tap opens.
///
/// Values come from a validated catalog (see ``PromoCatalog``), so `iconURL` is always HTTPS,
/// `appStoreID` is always digits and `tagline` always has at least one language.
///
/// ```swift
/// let app = PromoApp(
///     id: "myapp2", name: "My App 2", appStoreID: "987654321",
///     iconURL: URL(string: "https://example.com/icon2.png")!, category: "Finance",
///     tagline: ["en": "Manage your finances", "ko": "재정을 관리하세요"]
/// )
/// app.tagline(for: "ko-KR")  // "재정을 관리하세요"
/// ```
public struct PromoApp: Sendable, Hashable, Identifiable {
    /// The app's identifier in the catalog, e.g. `myapp2` (unique within a catalog).
    public var id: String
    /// The display name.
    public var name: String
    /// The App Store's numeric id, as a string of digits, e.g. `987654321`.
    public var appStoreID: String
    /// The icon's HTTPS URL.
    public var iconURL: URL
    /// The category label, e.g. `Finance`.
    public var category: String
    /// Descriptions by language tag (`en`, `ko`, `pt-BR`, …); see ``tagline(for:)``.
    public var tagline: [String: String]
    /// How often the app wins a place when the list is cut to a maximum (an extension of the
    /// seed's schema; nil when the catalog gives none). See ``PromoSelection``.
    public var weight: Double?

    /// Creates an app.
    /// - Parameters:
    ///   - id: the catalog identifier.
    ///   - name: the display name.
    ///   - appStoreID: the App Store's numeric id.
    ///   - iconURL: the icon's HTTPS URL.
    ///   - category: the category label.
    ///   - tagline: descriptions by language tag.
    ///   - weight: the rotation weight, or nil.
    public init(
        id: String,
        name: String,
        appStoreID: String,
        iconURL: URL,
        category: String,
        tagline: [String: String],
        weight: Double? = nil
    ) {
        self.id = id
        self.name = name
        self.appStoreID = appStoreID
        self.iconURL = iconURL
        self.category = category
        self.tagline = tagline
        self.weight = weight
    }

    /// The tagline a user with `locale` reads: that locale, then its language, then English,
    /// then any (see ``TaglineLocalizer``).
    /// - Parameter locale: a language tag or locale identifier, e.g. `pt-BR`, `ko_KR`.
    /// - Returns: the text, or an empty string when the app has no tagline at all.
    public func tagline(for locale: String) -> String {
        TaglineLocalizer.text(in: tagline, for: locale) ?? ""
    }
}
