import Foundation
import TouchpointCore

/// The insights that can be saved: each a page of the dashboard and a query of the API, both
/// reading the same parameters.
public enum InsightKind: String, Sendable, Hashable, CaseIterable {
    case trends
    case funnels
    case retention
    case paths
    case stickiness
    case lifecycle

    /// The insight's name on the dashboard.
    public var label: String {
        switch self {
        case .trends: "Trend"
        case .funnels: "Funnel"
        case .retention: "Retention"
        case .paths: "Paths"
        case .stickiness: "Stickiness"
        case .lifecycle: "Lifecycle"
        }
    }

    /// The dashboard page that shows it.
    var page: String { "/dashboard/\(rawValue)" }

    /// The query API's endpoint.
    var endpoint: String {
        switch self {
        case .trends: "/v1/query/trends"
        case .funnels: "/v1/query/funnel"
        case .retention: "/v1/query/retention"
        case .paths: "/v1/query/paths"
        case .stickiness: "/v1/query/stickiness"
        case .lifecycle: "/v1/query/lifecycle"
        }
    }

    /// The kind whose page is `path`.
    init?(page path: String) {
        guard path.hasPrefix("/dashboard/"), let kind = Self(rawValue: String(path.dropFirst(11))) else { return nil }
        self = kind
    }

    /// Reads `parameters` as the kind's query does.
    /// - Returns: the cohort the insight is restricted to, if any.
    /// - Throws: ``CollectorError`` naming the parameter that cannot be used.
    @discardableResult
    func validate(_ parameters: AnalyticsParameters) throws(CollectorError) -> Int64? {
        switch self {
        case .trends: try parameters.trend().cohort
        case .funnels: try parameters.funnel().cohort
        case .retention: try parameters.retention().cohort
        case .paths: try parameters.paths().cohort
        case .stickiness: try parameters.stickiness().cohort
        case .lifecycle: try parameters.lifecycle().cohort
        }
    }

    /// Parameters that are no part of an insight: which source, how to answer, where the page
    /// came from.
    static let ignoredParameters: Set<String> = ["source", "writeKey", "format", "cursor", "insight"]
}
