import TouchpointCore

/// A cross-promotion catalog: the apps in display order, the promo rules, and every problem
/// found while reading it.
///
/// The JSON is the seed's schema, extended compatibly (older catalogs read unchanged):
///
/// ```json
/// {
///   "apps": [
///     {
///       "id": "myapp1", "name": "My App 1", "appStoreID": "123456789",
///       "iconURL": "https://example.com/icon1.png", "category": "Productivity",
///       "tagline": { "en": "Your productivity companion", "ko": "당신의 생산성 동반자" },
///       "weight": 2
///     }
///   ],
///   "promoRules": { "myapp1": ["myapp2", "myapp3"] },
///   "maxApps": 3
/// }
/// ```
///
/// - `weight` (optional, a number ≥ 0, default 1): how often the app wins a place when the
///   list is cut to a maximum; see ``PromoSelection``.
/// - `maxApps` (optional, an integer ≥ 0): the most apps any list shows;
///   ``PromoConfig/maximumApps`` overrides it in one app.
///
/// Reading is lenient: ``init(json:)`` keeps every valid app and lists what it skipped in
/// ``problems`` (``PromoCatalogValidator`` returns the same list without building a catalog).
public struct PromoCatalog: Sendable, Hashable {
    /// The valid apps, in catalog order (which is display order).
    public var apps: [PromoApp]
    /// Which apps each app may promote, by the promoting app's id; lists keep catalog ids.
    /// An app without an entry promotes every other app.
    public var promoRules: [String: [String]]
    /// The most apps a list shows, or nil for no limit.
    public var maxApps: Int?
    /// Everything wrong with the document, each with its JSON path, in document order. Empty
    /// for a catalog built in code.
    public var problems: [JSONProblem]

    /// Creates a catalog in code.
    /// - Parameters:
    ///   - apps: the apps, in display order.
    ///   - promoRules: which apps each app may promote.
    ///   - maxApps: the most apps a list shows.
    ///   - problems: problems found reading it, if any.
    public init(
        apps: [PromoApp],
        promoRules: [String: [String]] = [:],
        maxApps: Int? = nil,
        problems: [JSONProblem] = []
    ) {
        self.apps = apps
        self.promoRules = promoRules
        self.maxApps = maxApps
        self.problems = problems
    }

    /// Reads a catalog leniently: an app entry that breaks a rule (an `iconURL` that is not
    /// HTTPS, a missing name, a duplicate id, …) is skipped and reported in ``problems``; the
    /// rest of the catalog is kept.
    /// - Parameter json: the parsed document.
    /// - Throws: a ``JSONProblem`` only when nothing can be used: the document is not an
    ///   object, or it has no `apps` array.
    public init(json: JSONValue) throws(JSONProblem) {
        var reader = PromoCatalogReader()
        self = try reader.read(json)
    }

    /// Reads a catalog from JSON bytes, leniently (see ``init(json:)``).
    /// - Parameter bytes: the document's bytes.
    /// - Throws: a ``JSONProblem`` at the root when the bytes are not JSON, or as ``init(json:)``.
    public init(bytes: [UInt8]) throws(JSONProblem) {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            throw JSONProblem(path: .root, message: error.description)
        }
        try self.init(json: json)
    }

    /// The app with `id`, if the catalog has a valid one.
    public func app(withID id: String) -> PromoApp? {
        apps.first { $0.id == id }
    }
}
