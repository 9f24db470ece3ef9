import Foundation
import TouchpointCore
import TouchpointPromo

/// Catalog documents for tests, built as JSON values so each test states what differs.
enum Catalogs {
    /// The seed's Quick Start catalog, verbatim.
    static let seedQuickStart = """
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

    /// One valid app entry.
    static func app(
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
    static func document(_ apps: [JSONValue], rules: JSONValue? = nil, maxApps: JSONValue? = nil) -> JSONValue {
        var root: [String: JSONValue] = ["apps": .array(apps)]
        if let rules { root["promoRules"] = rules }
        if let maxApps { root["maxApps"] = maxApps }
        return .object(root)
    }

    /// Apps with default fields, one per id.
    static func apps(_ ids: String...) -> [JSONValue] { ids.map { app($0) } }
}
