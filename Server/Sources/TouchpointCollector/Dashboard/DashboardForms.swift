import Foundation
import HTTPTypes
import Hummingbird
import TouchpointCore

/// The dashboard's forms that change what is saved: insights, dashboards and cohorts. Each is a
/// `POST` of an HTML form with the session cookie (refused from another site's page, as the
/// sign-in is), handled by ``SavedLibrary`` as the API is, then a redirect to the page that shows
/// the result; a field that cannot be used is a 400 page naming it.
enum DashboardForms {
    /// The paths of the forms.
    static let routes = [
        "/dashboard/insights", "/dashboard/insights/:insightId", "/dashboard/boards", "/dashboard/boards/:boardId",
        "/dashboard/cohorts", "/dashboard/cohorts/:cohortId",
    ]

    /// What a form did: where to send the browser next.
    typealias Handler = @Sendable (_ source: String, _ id: Int64?, _ fields: [String: String]) async throws -> String

    static func register(on routes: CollectorRouteTable, services: CollectorServices, sessions: DashboardSessions) {
        let saved = services.saved
        func on(_ path: String, back: String, _ handler: @escaping Handler) {
            routes.post(path, access: .dashboardSession) { request, context in
                try await handle(request, context, services, sessions, back: back, handler)
            }
        }

        on("/dashboard/insights", back: "/dashboard/boards") { source, _, fields in
            let kindName = fields["kind"] ?? ""
            guard let kind = InsightKind(rawValue: kindName) else {
                throw CollectorError(.invalidRequest, "kind: no insight of kind \"\(kindName)\"", path: "kind")
            }
            let insight = try await saved.createInsight(
                source: source, name: fields["name"] ?? "", kind: kind,
                parameters: try DashboardFormat.formFields(fields["parameters"] ?? ""))
            return "/dashboard/insights/\(insight.id)"
        }
        on("/dashboard/insights/:insightId", back: "/dashboard/boards") { source, id, fields in
            let id = id ?? 0
            switch fields["action"] {
            case "rename":
                _ = try await saved.updateInsight(source: source, id: id, name: fields["name"] ?? "", parameters: nil)
            case "update":
                _ = try await saved.updateInsight(
                    source: source, id: id, name: nil,
                    parameters: try DashboardFormat.formFields(fields["parameters"] ?? ""))
            case "delete":
                try await saved.deleteInsight(source: source, id: id)
                return "/dashboard/boards"
            case "add":
                let board: SavedDashboard
                if let number = fields["dashboard"].flatMap({ Int64($0) }) {
                    board = try await saved.dashboard(source: source, id: number)
                    _ = try await saved.updateDashboard(
                        source: source, id: board.id, name: nil, insights: board.insights + [id])
                } else {
                    board = try await saved.createDashboard(
                        source: source, name: fields["dashboardName"] ?? "", insights: [id])
                }
                return "/dashboard/boards/\(board.id)"
            default:
                throw unknownAction(fields)
            }
            return "/dashboard/insights/\(id)"
        }
        on("/dashboard/boards", back: "/dashboard/boards") { source, _, fields in
            let board = try await saved.createDashboard(source: source, name: fields["name"] ?? "", insights: [])
            return "/dashboard/boards/\(board.id)"
        }
        on("/dashboard/boards/:boardId", back: "/dashboard/boards") { source, id, fields in
            let id = id ?? 0
            let board = try await saved.dashboard(source: source, id: id)
            var insights = board.insights
            let insight = fields["insight"].flatMap { Int64($0) }
            let index = insight.flatMap { insights.firstIndex(of: $0) }
            switch (fields["action"], index) {
            case ("rename", _):
                _ = try await saved.updateDashboard(source: source, id: id, name: fields["name"] ?? "", insights: nil)
            case ("delete", _):
                try await saved.deleteDashboard(source: source, id: id)
                return "/dashboard/boards"
            case ("up", let index?) where index > 0:
                insights.swapAt(index, index - 1)
            case ("down", let index?) where index < insights.count - 1:
                insights.swapAt(index, index + 1)
            case ("remove", let index?):
                insights.remove(at: index)
            case ("up", _?), ("down", _?):
                break
            case ("up", nil), ("down", nil), ("remove", nil):
                throw CollectorError(.invalidRequest, "insight: not on this dashboard", path: "insight")
            default:
                throw unknownAction(fields)
            }
            if insights != board.insights {
                _ = try await saved.updateDashboard(source: source, id: id, name: nil, insights: insights)
            }
            return "/dashboard/boards/\(id)"
        }
        on("/dashboard/cohorts", back: "/dashboard/cohorts") { source, _, fields in
            let cohort = try await saved.createCohort(
                source: source, name: fields["name"] ?? "", conditions: try CohortsPage.conditions(fields))
            return "/dashboard/cohorts/\(cohort.id)"
        }
        on("/dashboard/cohorts/:cohortId", back: "/dashboard/cohorts") { source, id, fields in
            let id = id ?? 0
            if fields["action"] == "delete" {
                try await saved.deleteCohort(source: source, id: id)
                return "/dashboard/cohorts"
            }
            _ = try await saved.updateCohort(
                source: source, id: id, name: fields["name"] ?? "", conditions: try CohortsPage.conditions(fields))
            return "/dashboard/cohorts/\(id)"
        }
    }

    static func unknownAction(_ fields: [String: String]) -> CollectorError {
        CollectorError(
            .invalidRequest, "action: not one this form sends: \"\(fields["action"] ?? "")\"", path: "action")
    }

    /// Checks the session and the form's origin, reads the form, runs `handler`, and sends the
    /// browser where it says; a refusal is a page that says why, with a way back.
    static func handle(
        _ request: Request, _ context: CollectorRequestContext, _ services: CollectorServices,
        _ sessions: DashboardSessions, back: String, _ handler: Handler
    ) async throws -> Response {
        if let refused = DashboardRoutes.crossOriginRefusal(request, services) { return refused }
        guard DashboardRoutes.signedIn(request, sessions) else { return DashboardRoutes.refusal() }
        let pageContext = DashboardPageContext(
            services: services, source: try services.adminSource(request),
            parameters: try DashboardRoutes.parameters(of: request), now: services.clock.now(),
            pathParameters: DashboardRoutes.pathParameters(context))
        let body = try await RequestBodyReader.read(request, limit: 64 * 1024)
        let fields = try DashboardFormat.formFields(String(buffer: body))
        let id = ["insightId", "boardId", "cohortId"].lazy.compactMap { pageContext.pathParameters[$0] }.first
        do {
            let next = try await handler(pageContext.source, id.map { Int64($0) ?? -1 }, fields)
            return DashboardRoutes.redirect(to: pageContext.link(next))
        } catch let error as CollectorError where error.status.code < 500 {
            let page = DashboardLayout.page(
                title: "That was not saved", section: back, context: pageContext,
                body: """
                    \(DashboardLayout.problem(error.message))
                    <p><a href="\(pageContext.link(back))">Back</a> (or use your browser's back button to change the form)</p>
                    """)
            return DashboardRoutes.html(page, status: error.status)
        }
    }
}
