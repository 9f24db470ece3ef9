import Foundation
import TouchpointCore

/// Promo catalog documents for tests, built as JSON values so each test states what differs.
///
/// ```swift
/// let catalog = PromoCatalogs.document(PromoCatalogs.apps("a", "b"), maxApps: 1)
/// ```
public enum PromoCatalogs {
    /// The seed's Quick Start catalog, verbatim.
    public static let seedQuickStart = """
        {
          "apps": [
            {
              "id": "myapp1",
              "name": "My App 1",
              "appStoreID": "123456789",
              "iconURL": "https://example.com/icon1.png",
              "category": "Productivity",
              "tagline": {
                "en": "Your productivity companion",
                "ko": "당신의 생산성 동반자"
              }
            },
            {
              "id": "myapp2",
              "name": "My App 2",
              "appStoreID": "987654321",
              "iconURL": "https://example.com/icon2.png",
              "category": "Finance",
              "tagline": {
                "en": "Manage your finances",
                "ko": "재정을 관리하세요"
              }
            }
          ]
        }
        """

    /// One valid app entry; every field not given gets a value derived from `id`.
    /// - Parameters:
    ///   - id: the app's id.
    ///   - name: its name (`App <id>` by default).
    ///   - appStoreID: its App Store id (a stable number from `id` by default).
    ///   - icon: its icon URL.
    ///   - category: its category.
    ///   - tagline: its localized tagline (`{"en": "About <id>"}` by default).
    ///   - weight: its rotation weight, omitted by default.
    /// - Returns: the app entry as JSON.
    public static func app(
        _ id: String,
        name: String? = nil,
        appStoreID: String? = nil,
        icon: String? = nil,
        category: String = "Utilities",
        tagline: JSONValue? = nil,
        weight: JSONValue? = nil
    ) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(id),
            "name": .string(name ?? "App \(id)"),
            "appStoreID": .string(appStoreID ?? String(100_000 + StableHash.fnv1a(id) % 900_000)),
            "iconURL": .string(icon ?? "https://cdn.example.com/\(id).png"),
            "category": .string(category),
            "tagline": tagline ?? ["en": .string("About \(id)")],
        ]
        if let weight { fields["weight"] = weight }
        return .object(fields)
    }

    /// A catalog document of `apps`, with optional rules and maximum.
    /// - Parameters:
    ///   - apps: the app entries.
    ///   - rules: the `promoRules` member, omitted when nil.
    ///   - maxApps: the `maxApps` member, omitted when nil.
    /// - Returns: the catalog document.
    public static func document(_ apps: [JSONValue], rules: JSONValue? = nil, maxApps: JSONValue? = nil) -> JSONValue {
        var root: [String: JSONValue] = ["apps": .array(apps)]
        if let rules { root["promoRules"] = rules }
        if let maxApps { root["maxApps"] = maxApps }
        return .object(root)
    }

    /// Apps with default fields, one per id.
    /// - Parameter ids: the apps' ids.
    /// - Returns: one entry per id, in order.
    public static func apps(_ ids: String...) -> [JSONValue] { ids.map { app($0) } }
}
