import Foundation
import Hummingbird
import TouchpointCore

/// What a dashboard page is rendered from: the collector's parts, the source it shows, the
/// request's query parameters and the time.
struct DashboardPageContext: Sendable {
    let services: CollectorServices
    /// The source shown (`?source=`, `default` when absent).
    let source: String
    let parameters: [String: String]
    let now: Date
    /// Path parameters (`:sessionId`, `:surveyId`).
    let pathParameters: [String: String]
    /// Whether the page is drawn as a tile of a saved dashboard: its insight alone, without its
    /// form and links.
    var isTile = false
    /// The source's cohorts, for the insight pages' cohort picker.
    var cohorts: [Cohort] = []
    /// The names of the source's events, which the insight pages' event fields offer.
    var eventNames: [String] = []

    /// The query parameter `name`, nil when absent or empty.
    func parameter(_ name: String) -> String? {
        guard let value = parameters[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    /// A link to a dashboard path, keeping the source and adding `query` (nil values left out).
    func link(_ path: String, _ query: [(String, String?)] = []) -> String {
        var items: [(String, String)] = []
        if source != CollectorSource.defaultID { items.append(("source", source)) }
        for (name, value) in query { if let value { items.append((name, value)) } }
        guard !items.isEmpty else { return path }
        return path + "?"
            + items.map { "\(QueryParameters.encoded($0.0))=\(QueryParameters.encoded($0.1))" }
            .joined(separator: "&")
    }

    /// The `cursor` page parameter as a page request of `limit` items.
    var page: (Int) -> PageRequest {
        let cursor = parameter("cursor")
        return { limit in PageRequest(limit: limit, cursor: cursor) }
    }

    /// Where the source's days begin: the time zone the analytics pages show.
    var calendar: SourceCalendar { services.calendar(of: source) }

    /// A time parameter: RFC 3339, or a `datetime-local` value (`2026-11-22T04:30`, read in the
    /// source's time zone).
    /// - Throws: ``DashboardInputError`` naming the parameter when it is not a time.
    func time(_ name: String) throws -> Date? {
        guard let text = parameter(name).map(QueryParameters.timeText) else { return nil }
        if let date = Timestamp.parse(text) { return date }
        for suffix in [":00Z", "Z"] where text.count + suffix.count == 20 {
            if let local = Timestamp.parse(text + suffix) {
                return Timestamp.date(milliseconds: calendar.instant(ofLocal: Timestamp.milliseconds(local)))
            }
        }
        throw DashboardInputError(
            parameter: name, message: "not a time: \"\(text)\" (use 2026-11-22T09:41, in \(calendar.identifier))")
    }
}

/// A query parameter a page cannot use; the page shows it next to the form.
struct DashboardInputError: Error, Sendable {
    let parameter: String
    let message: String
}
