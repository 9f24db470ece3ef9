import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TouchpointCore

/// The web dashboard under `/dashboard`: sign-in with the admin token, then server-rendered pages
/// that read through ``CollectorQuery`` (the query API's layer) and a live tail over
/// server-sent events.
///
/// Every route except the sign-in page and the two static assets (a stylesheet and a script,
/// which hold no data) needs the session cookie: pages redirect to the sign-in page without it,
/// the event stream and sign-out answer 401.
enum DashboardRoutes {
    typealias Render = @Sendable (DashboardPageContext) async throws -> DashboardPage

    /// The pages, each needing a session.
    static let pages: [(path: String, render: Render)] = [
        ("/dashboard", OverviewPage.render),
        ("/dashboard/sessions", SessionsPage.render),
        ("/dashboard/sessions/:sessionId", SessionTimelinePage.render),
        ("/dashboard/surveys", SurveysPage.render),
        ("/dashboard/surveys/:surveyId", SurveyDetailPage.render),
        ("/dashboard/promotion", PromotionPage.render),
        ("/dashboard/people", PeoplePage.render),
        ("/dashboard/people/:userId", PersonPage.render),
        ("/dashboard/trends", TrendsPage.render),
        ("/dashboard/funnels", FunnelsPage.render),
        ("/dashboard/retention", RetentionPage.render),
        ("/dashboard/stickiness", StickinessPage.render),
        ("/dashboard/lifecycle", LifecyclePage.render),
        ("/dashboard/paths", PathsPage.render),
        ("/dashboard/cohorts", CohortsPage.render),
        ("/dashboard/cohorts/:cohortId", CohortPage.render),
        ("/dashboard/boards", BoardsPage.render),
        ("/dashboard/boards/:boardId", BoardPage.render),
        ("/dashboard/insights/:insightId", InsightPage.render),
        ("/dashboard/live", LivePage.render),
    ]

    /// The routes that need a session and are not pages.
    static let otherProtectedRoutes: [(method: HTTPRequest.Method, path: String)] =
        [
            (.get, "/dashboard/live/events"),
            (.post, "/dashboard/sign-out"),
        ] + DashboardForms.routes.map { (.post, $0) }

    static func register(on routes: CollectorRouteTable, services: CollectorServices) {
        let sessions = DashboardSessions(clock: services.clock)

        routes.get("/", access: .open) { _, _ in redirect(to: "/dashboard") }

        routes.get("/dashboard/assets/dashboard.css", access: .open) { _, _ in
            asset(DashboardStylesheet.text, contentType: "text/css; charset=utf-8")
        }
        routes.get("/dashboard/assets/dashboard.js", access: .open) { _, _ in
            asset(DashboardScript.text, contentType: "text/javascript; charset=utf-8")
        }

        routes.get("/dashboard/sign-in", access: .open) { request, _ in
            if signedIn(request, sessions) { return redirect(to: safeNext(try request.parameters().get("next"))) }
            return html(SignInPage.render(next: safeNext(try request.parameters().get("next")), problem: nil))
        }

        routes.post("/dashboard/sign-in", access: .open) { request, context in
            if let refused = crossOriginRefusal(request, services) { return refused }
            let body = try await RequestBodyReader.read(request, limit: 8 * 1024)
            let fields = try DashboardFormat.formFields(String(buffer: body))
            let next = safeNext(fields["next"])
            let right: Bool
            do throws(CollectorError) {
                right = try services.secretGuesses.attempt(
                    "admin token (dashboard sign-in)", from: context.clientAddress
                ) {
                    CollectorServices.constantTimeEquals(fields["token"] ?? "", services.credentials.adminToken)
                }
            } catch {
                var response = html(
                    SignInPage.render(next: next, problem: "Too many wrong tokens from here: \(error.message)."),
                    status: .tooManyRequests)
                if let wait = error.retryAfter { response.headers[.retryAfter] = String(wait) }
                return response
            }
            guard right else {
                // A wrong token costs a moment, so guessing a short one by hand is slow.
                try await Task.sleep(for: .milliseconds(250))
                return html(
                    SignInPage.render(next: next, problem: "That is not this collector's admin token."),
                    status: .unauthorized)
            }
            var response = redirect(to: next)
            response.setCookie(
                Cookie(
                    name: DashboardSessions.cookieName, value: sessions.create(), maxAge: Int(sessions.lifetime),
                    path: "/dashboard", secure: services.scheme(of: request) == "https", httpOnly: true,
                    sameSite: .strict))
            return response
        }

        routes.post("/dashboard/sign-out", access: .dashboardSession) { request, _ in
            if let refused = crossOriginRefusal(request, services) { return refused }
            guard let token = sessionToken(request), sessions.isValid(token) else { return refusal() }
            sessions.remove(token)
            var response = redirect(to: "/dashboard/sign-in")
            response.setCookie(
                Cookie(
                    name: DashboardSessions.cookieName, value: "", maxAge: 0, path: "/dashboard",
                    secure: services.scheme(of: request) == "https", httpOnly: true, sameSite: .strict))
            return response
        }

        for page in pages {
            routes.get(page.path, access: .dashboardSession) { request, context in
                guard signedIn(request, sessions) else { return redirectToSignIn(request) }
                var pageContext = DashboardPageContext(
                    services: services, source: try services.adminSource(request),
                    parameters: try parameters(of: request), now: services.clock.now(),
                    pathParameters: pathParameters(context))
                let kind = InsightKind(page: page.path)
                if kind != nil {
                    // What an insight's form offers: the source's event names and cohorts.
                    pageContext.cohorts = try await services.saved.cohorts(source: pageContext.source)
                    pageContext.eventNames = try await services.query.eventNames(source: pageContext.source)
                }
                var rendered: DashboardPage
                do {
                    rendered = try await page.render(pageContext)
                    if let kind, let saved = savable(rendered, kind: kind, context: pageContext) {
                        rendered.body += try await InsightPage.saveBox(pageContext, kind: kind, parameters: saved)
                    }
                } catch let error as DashboardInputError {
                    rendered = DashboardPage(
                        title: "Cannot show this page", section: page.path,
                        body: DashboardLayout.problem("\(error.parameter): \(error.message)"), status: .badRequest)
                } catch let error as StorageError where error.code == .queryTooSlow {
                    // As the query API answers it (422, no retry): the same range would be stopped again.
                    rendered = DashboardPage(
                        title: "This insight took too long", section: page.path,
                        body: DashboardLayout.problem(
                            "The query ran past its time limit and was stopped. Choose a shorter range (from, to) or fewer steps."
                        ),
                        status: .unprocessableContent)
                }
                if pageContext.parameter("format") == "csv" {
                    guard rendered.status == .ok else {
                        throw CollectorError(
                            .invalidParameter,
                            "the page cannot show its table with these parameters; open it without format=csv to see why"
                        )
                    }
                    guard let csv = rendered.csv else {
                        throw CollectorError(.notFound, "this page has no table to download with these parameters")
                    }
                    var headers = securityHeaders(contentType: "text/csv; charset=utf-8")
                    headers[.contentDisposition] = "attachment; filename=\"\(csv.name).csv\""
                    return Response(
                        status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: csv.text)))
                }
                return html(
                    DashboardLayout.page(
                        title: rendered.title, section: rendered.section, context: pageContext, body: rendered.body),
                    status: rendered.status)
            }
        }

        DashboardForms.register(on: routes, services: services, sessions: sessions)

        routes.get("/dashboard/live/events", access: .dashboardSession) { request, _ in
            guard let token = sessionToken(request), sessions.isValid(token) else { return refusal() }
            let source = try services.adminSource(request)
            guard let subscription = services.live.subscribe(source: source) else {
                throw CollectorError(.storageUnavailable, "too many live views are open; close one and retry")
            }
            // Ends at sign-out and when the session expires, not only when the page goes away.
            return LiveEventStream.response(subscription) { sessions.isValid(token) }
        }
    }

    /// The parameters an insight page's answer is saved with: those the page says, or its own
    /// when they make a query of its kind; nil when the page shows no answer.
    static func savable(_ page: DashboardPage, kind: InsightKind, context: DashboardPageContext) -> [String: String]? {
        guard page.status == .ok else { return nil }
        if let parameters = page.insight { return parameters }
        var values = context.parameters.filter { !InsightKind.ignoredParameters.contains($0.key) && !$0.value.isEmpty }
        for name in ["from", "to"] {
            if let date = try? context.time(name) { values[name] = Timestamp.format(date) }
        }
        do {
            try kind.validate(AnalyticsParameters(now: context.now) { values[$0] })
            return values
        } catch {
            return nil
        }
    }

    // MARK: Sessions

    /// A dashboard form posted from a page of another site (`Origin` names another host than the
    /// request's, or is `null`) is refused with 403; requests without `Origin` (not from a
    /// browser page) pass, and the `SameSite=Strict` cookie guards the rest.
    static func crossOriginRefusal(_ request: Request, _ services: CollectorServices) -> Response? {
        guard let origin = request.headers[HTTPField.Name("Origin")!] else { return nil }
        let host = request.head.authority ?? HTTPField.Name("Host").flatMap { request.headers[$0] }
        let allowed = [
            host.map { CORSPolicy.normalized("\(services.scheme(of: request))://\($0)") },
            services.publicURL.flatMap(CORSPolicy.origin(of:)),
        ]
        guard !allowed.contains(CORSPolicy.normalized(origin)) else { return nil }
        return Response(
            status: .forbidden, headers: securityHeaders(contentType: "text/plain; charset=utf-8"),
            body: ResponseBody(
                byteBuffer: ByteBuffer(
                    string:
                        "This form was sent from another site (Origin: \(origin)); sign in from the dashboard itself.\n"
                )))
    }

    static func sessionToken(_ request: Request) -> String? {
        request.cookies[DashboardSessions.cookieName]?.value
    }

    static func signedIn(_ request: Request, _ sessions: DashboardSessions) -> Bool {
        guard let token = sessionToken(request) else { return false }
        return sessions.isValid(token)
    }

    /// Where to go after signing in: a dashboard path, never another site.
    static func safeNext(_ next: String?) -> String {
        guard let next, next == "/dashboard" || next.hasPrefix("/dashboard/") || next.hasPrefix("/dashboard?"),
            !next.contains("\\"), !next.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return "/dashboard" }
        return next
    }

    // MARK: Responses

    static func parameters(of request: Request) throws -> [String: String] {
        try request.parameters().dictionary
    }

    static func pathParameters(_ context: CollectorRequestContext) -> [String: String] {
        var parameters: [String: String] = [:]
        for name in ["sessionId", "surveyId", "userId", "cohortId", "boardId", "insightId"] {
            if let value = try? context.pathParameter(name) { parameters[name] = value }
        }
        return parameters
    }

    /// Headers every dashboard response carries: no caching, no framing, no other origins.
    static func securityHeaders(contentType: String) -> HTTPFields {
        var headers: HTTPFields = [:]
        headers[.contentType] = contentType
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] =
            "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        // Not no-referrer: under it a browser sends `Origin: null` with the dashboard's own forms,
        // and the sign-in's origin check could not tell them from another site's.
        headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        return headers
    }

    static func html(_ page: HTML, status: HTTPTypes.HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: securityHeaders(contentType: "text/html; charset=utf-8"),
            body: ResponseBody(byteBuffer: ByteBuffer(string: page.markup)))
    }

    static func asset(_ text: String, contentType: String) -> Response {
        var headers = securityHeaders(contentType: contentType)
        headers[.cacheControl] = "max-age=300"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func redirect(to location: String) -> Response {
        var headers = securityHeaders(contentType: "text/plain; charset=utf-8")
        headers[.location] = location
        return Response(status: .seeOther, headers: headers)
    }

    static func redirectToSignIn(_ request: Request) -> Response {
        let next = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        return redirect(to: "/dashboard/sign-in?next=" + QueryParameters.encoded(safeNext(next)))
    }

    static func refusal() -> Response {
        Response(
            status: .unauthorized, headers: securityHeaders(contentType: "text/plain; charset=utf-8"),
            body: ResponseBody(byteBuffer: ByteBuffer(string: "Sign in to the dashboard first: /dashboard/sign-in\n")))
    }
}
