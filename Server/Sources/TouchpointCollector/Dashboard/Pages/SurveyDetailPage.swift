import Foundation
import TouchpointCore

/// `/dashboard/surveys/{id}`: one survey's counts, a bar chart of its choice answers, and its
/// text answers newest first, a page at a time.
enum SurveyDetailPage {
    static let answersPerPage = 20

    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let id = context.pathParameters["surveyId"] ?? ""
        let results = try await context.services.query.surveyResults(source: context.source)
        let result = results.first { $0.surveyId == id } ?? SurveyResult(surveyId: id)
        let config = try await SurveyConfigView.load(context)
        let rule = config.survey(id)

        // Options in the config's order (unanswered ones too), then any other answers seen.
        var options =
            rule?["response"]?["options"]?.arrayValue?.compactMap(\.stringValue)
            ?? rule?["options"]?.arrayValue?.compactMap(\.stringValue) ?? []
        for option in result.choices.keys.sorted() where !options.contains(option) { options.append(option) }
        let bars = options.map { SVGChart.Bar(label: $0, value: result.choices[$0] ?? 0) }
        let choiceTotal = bars.reduce(0) { $0 + $1.value }
        let chart: HTML =
            bars.isEmpty
            ? "<p class=\"empty\">No choice answers.</p>"
            : SVGChart.rows(
                bars, title: "Choice answers to \(id)",
                description: "\(choiceTotal) choice answers: "
                    + bars.map { "\($0.label) \($0.value)" }.joined(separator: ", ") + ".",
                id: "choices-chart")
        let choiceRows = bars.map { bar -> HTML in
            "<tr data-option=\"\(bar.label)\"><th scope=\"row\">\(bar.label)</th><td class=\"count\">\(bar.value)</td></tr>"
        }

        let answers = try await context.services.query.surveyTextAnswers(
            source: context.source, surveyId: id, newestFirst: true, page: context.page(answersPerPage))
        let answerItems = answers.items.map { answer -> HTML in
            let who = answer.userId ?? answer.anonymousId.map { "anonymous \($0)" } ?? "–"
            return """
                <li><blockquote>\(answer.text)</blockquote><p class="meta">\
                <time datetime="\(Timestamp.format(answer.timestamp))">\(DashboardFormat.time(answer.timestamp))</time> · \(who)</p></li>
                """
        }
        let path = "/dashboard/surveys/" + QueryParameters.encoded(id)
        let next = answers.nextCursor.map { context.link(path, [("cursor", $0)]) }
        let title = rule?["title"]?.stringValue
        let question = rule?["message"]?.stringValue
        let heading: HTML =
            title.map { title in
                "<p class=\"question\"><strong>\(title)</strong>\(question.map { " — \($0)" } ?? "")</p>"
            } ?? .empty
        let choiceTable = DashboardLayout.table(
            caption: "Choice answers", head: ["Option", "Answers"], rows: choiceRows, id: "choice-tallies",
            empty: "")
        let answerList: HTML =
            answerItems.isEmpty
            ? "<p class=\"empty\">No text answers\(context.parameter("cursor") == nil ? "" : " on this page").</p>"
            : "<ol class=\"answers\" id=\"text-answers\">\(answerItems)</ol>"
        let body: HTML = """
            \(heading)
            <dl class="summary" id="survey-counts">
            <div><dt>Presented</dt><dd class="presented">\(result.presented)</dd></div>
            <div><dt>Responded</dt><dd class="responded">\(result.responded)</dd></div>
            <div><dt>Dismissed</dt><dd class="dismissed">\(result.dismissed)</dd></div>
            <div><dt>Response rate</dt><dd class="rate">\(DashboardFormat.percent(result.responseRate))</dd></div>
            <div><dt>Text answers</dt><dd class="text-count">\(result.textAnswers)</dd></div>
            </dl>
            <section aria-labelledby="choices-heading">
            <h2 id="choices-heading">Choices</h2>
            \(chart)
            \(choiceTable)
            \(DashboardLayout.csvLink(context, path: "/dashboard/surveys/" + QueryParameters.encoded(id)))
            </section>
            <section aria-labelledby="answers-heading">
            <h2 id="answers-heading">Text answers <small>(newest first)</small></h2>
            \(answerList)
            \(DashboardLayout.nextPage(next, label: "Older answers"))
            </section>
            <p><a href="\(context.link("/dashboard/surveys"))">← All surveys</a></p>
            """
        let csv = DashboardCSV(
            name: "survey-choices", header: ["option", "answers"], rows: bars.map { [$0.label, String($0.value)] })
        return DashboardPage(title: "Survey \(id)", section: "/dashboard/surveys", body: body, csv: csv)
    }
}
