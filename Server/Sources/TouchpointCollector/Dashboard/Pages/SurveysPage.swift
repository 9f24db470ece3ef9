import Foundation
import TouchpointCore

/// `/dashboard/surveys`: every survey's presented, responded and dismissed counts and response
/// rate, and the live survey config with the problems the validator reports in it.
enum SurveysPage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let results = try await context.services.query.surveyResults(source: context.source)
        let config = try await SurveyConfigView.load(context)
        var ids = results.map(\.surveyId)
        for id in config.surveyIDs where !ids.contains(id) { ids.append(id) }
        let byID = Dictionary(uniqueKeysWithValues: results.map { ($0.surveyId, $0) })
        let rows = ids.map { id -> HTML in
            let result = byID[id] ?? SurveyResult(surveyId: id)
            return """
                <tr data-survey="\(id)"><th scope="row"><a href="\(context.link("/dashboard/surveys/" + QueryParameters.encoded(id)))">\(id)</a></th>\
                <td class="presented">\(result.presented)</td><td class="responded">\(result.responded)</td>\
                <td class="dismissed">\(result.dismissed)</td><td class="rate">\(DashboardFormat.percent(result.responseRate))</td></tr>
                """
        }
        let table = DashboardLayout.table(
            caption: "Survey results", head: ["Survey", "Presented", "Responded", "Dismissed", "Response rate"],
            rows: rows, id: "survey-results", empty: "")
        let body: HTML = """
            \(table)
            \(DashboardLayout.csvLink(context, path: "/dashboard/surveys"))
            <section aria-labelledby="config-heading">
            <h2 id="config-heading">Live survey config</h2>
            \(config.html)
            </section>
            """
        let csv = DashboardCSV(
            name: "surveys", header: ["surveyId", "presented", "responded", "dismissed", "responseRate"],
            rows: ids.map { id in
                let result = byID[id] ?? SurveyResult(surveyId: id)
                return [
                    id, String(result.presented), String(result.responded), String(result.dismissed),
                    result.responseRate.map { String($0) } ?? "",
                ]
            })
        return DashboardPage(title: "Surveys", section: "/dashboard/surveys", body: body, csv: csv)
    }
}

/// The stored survey config as the dashboard shows it: its text, when it was stored, and what
/// the collector's validator says about it now.
struct SurveyConfigView: Sendable {
    var document: ConfigDocument?
    var parsed: JSONValue?
    var problems: [JSONProblem]
    var parseError: String?
    var served: Bool

    /// The ids of the surveys in the config, in its order.
    var surveyIDs: [String] {
        (parsed?["surveys"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
    }

    /// The config's entry for survey `id`.
    func survey(_ id: String) -> JSONValue? {
        parsed?["surveys"]?.arrayValue?.first { $0["id"]?.stringValue == id }
    }

    static func load(_ context: DashboardPageContext) async throws -> SurveyConfigView {
        let configs = context.services.configs
        guard configs.validators.contains(.surveys) else {
            return SurveyConfigView(document: nil, parsed: nil, problems: [], parseError: nil, served: false)
        }
        guard let document = try await configs.document(source: context.source, kind: .surveys) else {
            return SurveyConfigView(document: nil, parsed: nil, problems: [], parseError: nil, served: true)
        }
        do {
            let parsed = try JSONParser.parse(Array(document.body.utf8))
            let problems = configs.validators.problems(in: parsed, kind: .surveys) ?? []
            return SurveyConfigView(
                document: document, parsed: parsed, problems: problems, parseError: nil, served: true)
        } catch {
            return SurveyConfigView(
                document: document, parsed: nil, problems: [], parseError: "\(error)", served: true)
        }
    }

    var html: HTML {
        guard served else { return "<p class=\"empty\">This collector does not serve survey configs.</p>" }
        guard let document else {
            return """
                <p class="empty" id="config-missing">No survey config has been stored yet. Store one with \
                <code>PUT /v1/config/surveys</code> and the admin token (<code>touchpoint demo</code> stores one).</p>
                """
        }
        var status: HTML
        if let parseError {
            status = "<p class=\"problem\" role=\"alert\" id=\"config-problems\">Not JSON: \(parseError)</p>"
        } else if problems.isEmpty {
            status = "<p class=\"ok\" id=\"config-valid\">The validator finds no problems in it.</p>"
        } else {
            let items = problems.map { problem -> HTML in
                "<li><code>\(problem.path.description)</code>: \(problem.message)</li>"
            }
            status = """
                <div class="problem" role="alert"><p>The validator reports \(problems.count) \
                problem\(problems.count == 1 ? "" : "s"):</p><ul id="config-problems">\(items)</ul></div>
                """
        }
        return """
            <p>Stored \(DashboardFormat.time(document.updatedAt)) UTC, ETag <code>\(document.etag)</code>, \
            \(document.body.utf8.count) bytes.</p>
            \(status)
            <pre class="config" tabindex="0" aria-label="Survey config JSON"><code>\(document.body)</code></pre>
            """
    }
}
