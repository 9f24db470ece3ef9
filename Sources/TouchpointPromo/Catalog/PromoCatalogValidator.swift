import TouchpointCore

/// Checks a catalog document and returns every problem, each with its JSON path, without a
/// ``PromoService``: the entry point for the collector's `PUT /v1/config/catalog` and for
/// `touchpoint promo preview`.
///
/// It runs the same walk as the lenient loader (``PromoCatalog/init(json:)``), so a catalog
/// it accepts loads in the SDK with nothing skipped.
///
/// ```swift
/// let validate: (JSONValue) -> [JSONProblem] = PromoCatalogValidator.problems(in:)
/// for problem in validate(document) { print(problem) }  // apps[2].iconURL: must be an https URL
/// ```
public enum PromoCatalogValidator {
    /// Every problem in `json`, in document order; empty when the catalog is valid.
    /// - Parameter json: the parsed catalog document.
    /// - Returns: the problems; a document that cannot be used at all (not an object, no
    ///   `apps` array) yields exactly one, at the root or at `apps`.
    public static func problems(in json: JSONValue) -> [JSONProblem] {
        do {
            return try PromoCatalog(json: json).problems
        } catch {
            return [error]
        }
    }
}
