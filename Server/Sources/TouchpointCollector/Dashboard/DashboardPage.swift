import HTTPTypes

/// A rendered dashboard page, before the layout frames it.
struct DashboardPage: Sendable {
    /// The title and heading.
    var title: String
    /// The navigation entry it belongs to (a path of ``DashboardLayout/sections``).
    var section: String
    /// The content below the heading.
    var body: HTML
    /// The response status (400 when a filter could not be used, 404 for an unknown session; an
    /// unknown survey shows zero counts).
    var status: HTTPTypes.HTTPResponse.Status = .ok
    /// The page's main table as CSV (served for `?format=csv`), when it has one.
    var csv: DashboardCSV?
    /// An insight page's parameters as its query reads them, when it shows one whose form
    /// names them otherwise (what saving it keeps); nil: the page's own parameters.
    var insight: [String: String]?
}
