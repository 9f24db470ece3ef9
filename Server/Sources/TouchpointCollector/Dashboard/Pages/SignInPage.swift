/// `/dashboard/sign-in`: the admin token, once, for a session cookie.
enum SignInPage {
    static func render(next: String, problem: String?) -> HTML {
        let alert: HTML = problem.map { DashboardLayout.problem($0) } ?? .empty
        let body: HTML = """
            \(alert)
            <form method="post" action="/dashboard/sign-in" class="sign-in">
            <input type="hidden" name="next" value="\(next)">
            <p><label for="token">Admin token</label>
            <input id="token" name="token" type="password" autocomplete="current-password" required autofocus></p>
            <p><button type="submit">Sign in</button></p>
            </form>
            <p class="hint">The token is printed by <code>touchpoint serve</code> and kept in \
            <code>credentials.json</code> in the data directory.</p>
            """
        return DashboardLayout.page(title: "Sign in", section: nil, context: nil, body: body)
    }
}
