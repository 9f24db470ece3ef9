import ArgumentParser
import Foundation
import Touchpoint

/// `touchpoint users`: a collector's users, for the operator.
struct UsersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "Act on a collector's users.", subcommands: [UsersDeleteCommand.self])
}

/// `touchpoint users delete`: deletes users' data on a collector (`POST /v1/admin/deletions`).
struct UsersDeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete every event, session and scenario document of users on a collector.",
        discussion: """
            The anonymous ids the users were seen with are deleted too. With --suppress, the ids' \
            later events are refused until the suppression is lifted (DELETE /v1/admin/deletions/<id>).
              touchpoint users delete --collector http://127.0.0.1:8080 --admin-token T --user-id u-42 --suppress
            """)

    @Option(help: "The collector's base URL.")
    var collector: String

    @Option(name: .customLong("admin-token"), help: "The collector's admin token (env TOUCHPOINT_ADMIN_TOKEN).")
    var adminToken: String?

    @Option(name: .customLong("user-id"), help: "A user id to delete (repeat for several).")
    var userIds: [String] = []

    @Option(name: .customLong("anonymous-id"), help: "An anonymous id to delete (repeat for several).")
    var anonymousIds: [String] = []

    @Option(help: "The source (default: the collector's default source).")
    var source: String?

    @Flag(help: "Refuse the ids' later events until the suppression is lifted.")
    var suppress = false

    @Option(help: "Seconds to wait for the collector's answer (a deletion rewrites what held the ids).")
    var timeout: Double = 300

    func run() async throws {
        guard let base = URL(string: collector), ["http", "https"].contains(base.scheme?.lowercased() ?? "") else {
            throw ValidationError("--collector: not an http or https URL: \(collector)")
        }
        guard let token = adminToken ?? ProcessInfo.processInfo.environment["TOUCHPOINT_ADMIN_TOKEN"] else {
            throw ValidationError("--admin-token is needed (or TOUCHPOINT_ADMIN_TOKEN)")
        }
        guard !userIds.isEmpty || !anonymousIds.isEmpty else {
            throw ValidationError("name at least one --user-id or --anonymous-id")
        }
        guard timeout > 0, timeout.isFinite else {
            throw ValidationError("--timeout must be a positive number of seconds, got \(timeout)")
        }
        var path = base.absoluteString
        while path.hasSuffix("/") { path.removeLast() }
        path += "/v1/admin/deletions"
        if let source {
            path += "?source=" + (source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? source)
        }
        guard let url = URL(string: path) else { throw ValidationError("--collector: \(collector) makes no URL") }
        var request = TransportRequest(method: .post, url: url)
        request.timeout = timeout
        request.headers["Authorization"] = "Bearer \(token)"
        request.headers["Content-Type"] = "application/json"
        request.body = JSONValue.object([
            "userIds": .array(userIds.map(JSONValue.string)),
            "anonymousIds": .array(anonymousIds.map(JSONValue.string)),
            "suppress": .bool(suppress),
        ]).jsonBytes(sortedKeys: true)
        let response = try await URLSessionTransport().send(request)
        let text = String(decoding: response.body, as: UTF8.self)
        guard response.status == 201 else {
            throw ValidationError("the collector answered \(response.status): \(text)")
        }
        print(text)
    }
}
