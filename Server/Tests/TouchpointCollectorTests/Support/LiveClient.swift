import Foundation
import TouchpointCore
import TouchpointTesting

/// Requests to a live collector on 127.0.0.1, one connection each, run on a thread of their own
/// (the client blocks).
struct LiveClient: Sendable {
    typealias Response = RawConnection.Response

    let port: Int

    init(port: Int) {
        self.port = port
    }

    func send(method: String, path: String, headers: [(String, String)] = [], body: [UInt8] = []) async throws
        -> Response
    {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let request = Array((head + "Connection: close\r\n\r\n").utf8) + body
        let port = self.port
        return try await onOwnThread {
            let connection = try RawConnection(port: port)
            try connection.send(request)
            return try connection.readResponse(bodyless: method == "HEAD")
        }
    }

    func postBatch(_ body: [UInt8], writeKey: String) async throws -> Response {
        try await send(
            method: "POST", path: "/v1/batch", headers: [("Authorization", TestMessages.basic(writeKey))], body: body)
    }

    func count(adminToken: String) async throws -> Int {
        let response = try await send(
            method: "GET", path: "/v1/query/counts", headers: [("Authorization", "Bearer \(adminToken)")])
        guard response.status == 200, let events = try JSONParser.parse(response.body)["events"]?.intValue else {
            throw TestFailure("counts: HTTP \(response.status) \(response.text)")
        }
        return events
    }
}
