/// The frame around every dashboard page: head, navigation, sign-out, main content.
enum DashboardLayout {
    /// The sections of the navigation: path and label.
    static let sections: [(path: String, label: String)] = [
        ("/dashboard", "Overview"),
        ("/dashboard/sessions", "Sessions"),
        ("/dashboard/surveys", "Surveys"),
        ("/dashboard/promotion", "Promotion"),
        ("/dashboard/people", "People"),
        ("/dashboard/trends", "Trends"),
        ("/dashboard/funnels", "Funnels"),
        ("/dashboard/retention", "Retention"),
        ("/dashboard/stickiness", "Stickiness"),
        ("/dashboard/lifecycle", "Lifecycle"),
        ("/dashboard/paths", "Paths"),
        ("/dashboard/cohorts", "Cohorts"),
        ("/dashboard/boards", "Dashboards"),
        ("/dashboard/live", "Live"),
    ]

    /// A whole page.
    /// - Parameters:
    ///   - title: the page's title and heading.
    ///   - section: the navigation entry to mark current (its path).
    ///   - context: for links that keep the source; nil on the sign-in page (no navigation).
    ///   - body: the page's content after its heading.
    static func page(title: String, section: String?, context: DashboardPageContext?, body: HTML) -> HTML {
        var navigation = HTML.empty
        if let context {
            var links = HTML.empty
            for entry in sections {
                let current: HTML = entry.path == section ? " aria-current=\"page\"" : ""
                links += "<li><a href=\"\(context.link(entry.path))\"\(current)>\(entry.label)</a></li>"
            }
            let source: HTML =
                context.services.sources.count > 1
                ? "<span class=\"source\">Source: <strong>\(context.source)</strong></span>" : ""
            navigation = """
                <header class="top">
                <a class="brand" href="\(context.link("/dashboard"))">Touchpoint</a>
                <nav aria-label="Dashboard sections"><ul>\(links)</ul></nav>
                \(source)
                <form method="post" action="/dashboard/sign-out" class="sign-out"><button type="submit">Sign out</button></form>
                </header>
                """
        }
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · Touchpoint</title>
            <link rel="stylesheet" href="/dashboard/assets/dashboard.css">
            <script src="/dashboard/assets/dashboard.js" defer></script>
            </head>
            <body>
            <a class="skip" href="#main">Skip to content</a>
            \(navigation)
            <main id="main" tabindex="-1">
            <h1>\(title)</h1>
            \(body)
            </main>
            </body>
            </html>

            """
    }

    /// A table inside a box that scrolls sideways on a narrow screen.
    static func table(caption: String, head: [String], rows: [HTML], id: String? = nil, empty: String) -> HTML {
        guard !rows.isEmpty || id != nil else { return "<p class=\"empty\">\(empty)</p>" }
        let identifier: HTML = id.map { "id=\"\($0)\" " } ?? ""
        let headings = head.map { heading -> HTML in "<th scope=\"col\">\(heading)</th>" }
        return """
            <div class="table-wrap" tabindex="0" role="region" aria-label="\(caption)">
            <table \(identifier)>
            <caption>\(caption)</caption>
            <thead><tr>\(headings)</tr></thead>
            <tbody>\(rows)</tbody>
            </table>
            </div>
            """
    }

    /// A "next page" link, or nothing on the last page.
    static func nextPage(_ link: String?, label: String) -> HTML {
        guard let link else { return .empty }
        return "<p class=\"pager\"><a href=\"\(link)\" rel=\"next\">\(label) →</a></p>"
    }

    /// A link to the same page as CSV, keeping its parameters.
    static func csvLink(_ context: DashboardPageContext, path: String) -> HTML {
        guard !context.isTile else { return .empty }
        var query = context.parameters.filter { $0.key != "source" && $0.key != "format" && $0.key != "cursor" }
            .sorted { $0.key < $1.key }.map { ($0.key, Optional($0.value)) }
        query.append(("format", "csv"))
        return
            "<p class=\"download\"><a href=\"\(context.link(path, query))\" download>Download this table as CSV</a></p>"
    }

    /// A problem with the request, shown above the content.
    static func problem(_ message: String) -> HTML {
        "<p class=\"problem\" role=\"alert\">\(message)</p>"
    }
}
