import Foundation
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Requests to a live collector over 127.0.0.1, run on a thread of their own (the client blocks).
struct LiveClient: Sendable {
    let host: String
    let port: Int

    init(host: String = "127.0.0.1", port: Int) {
        self.host = host
        self.port = port
    }

    func send(method: String, path: String, headers: [(String, String)] = [], body: [UInt8] = []) async throws
        -> HTTPConnection.Response
    {
        let host = self.host
        let port = self.port
        return try await LoadGenerator.onThread {
            try HTTPConnection(host: host, port: port, timeoutSeconds: 20).send(
                method: method, path: path, headers: headers, body: body)
        }
    }

    func postBatch(_ body: [UInt8], writeKey: String) async throws -> HTTPConnection.Response {
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
