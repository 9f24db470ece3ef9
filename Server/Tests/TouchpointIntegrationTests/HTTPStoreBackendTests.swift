import Foundation
import Testing
import TouchpointCore
import TouchpointStore
import TouchpointTesting

/// What only the HTTP backend has: its URLs, the namespace document, and errors that say where.
struct HTTPStoreBackendTests {
    @Test func aScopeWithoutScenarioIDIsTheDashDocumentThatOtherClientsSee() async throws {
        let collector = try await LiveCollector.start()
        let backend = HTTPStoreBackend(
            collector: collector.baseURL, writeKey: collector.writeKey, user: LiveCollector.user("u 1"))
        #expect(
            try backend.url(namespace: "acme", scenarioID: nil).absoluteString
                == "http://127.0.0.1:\(collector.port)/v1/users/u%201/scenario/acme/-")
        #expect(
            try backend.url(namespace: "a b/c", scenarioID: "..").absoluteString
                == "http://127.0.0.1:\(collector.port)/v1/users/u%201/scenario/a%20b%2Fc/%2E%2E")
        let etag = try await backend.push(
            ["theme": .color("#112233"), "count": 2], namespace: "acme", scenarioID: nil, precondition: .ifAbsent)

        // Any HTTP client with the user's signature reads the same document at …/acme/-, in the tagged encoding.
        var request = TransportRequest(url: collector.baseURL.appendingPathComponent("v1/users/u 1/scenario/acme/-"))
        request.headers["Authorization"] = "Basic " + Data((collector.writeKey + ":").utf8).base64EncodedString()
        request.headers[HTTPStoreBackend.signatureHeader] = LiveCollector.user("u 1").signature
        let response = try await URLSessionTransport().send(request)
        #expect(response.status == 200)
        #expect(response.headers["ETag"] == etag)
        #expect(try JSONParser.parse(response.body) == ["count": 2, "theme": ["$color": "#112233"]])
        try await collector.stop()
    }

    @Test func withoutAUserTheNamespacesDocumentsAreReadOnly() async throws {
        let collector = try await LiveCollector.start()
        let shared = HTTPStoreBackend(collector: collector.baseURL, writeKey: collector.writeKey)
        #expect(
            try shared.url(namespace: "acme", scenarioID: "banner").absoluteString
                == "http://127.0.0.1:\(collector.port)/v1/scenario/acme/banner")
        let refused = await expectStoreError(.backendFailure) {
            _ = try await shared.push(["a": 1], namespace: "acme", scenarioID: "banner", precondition: .ifAbsent)
        }
        #expect(refused?.message.contains("HTTP 403") == true, "\(String(describing: refused))")
        #expect(refused?.message.contains("admin token") == true)
        // What the team writes with the admin token, every app reads.
        var request = TransportRequest(
            method: .put, url: collector.baseURL.appendingPathComponent("v1/scenario/acme/banner"))
        request.headers["Authorization"] = "Bearer \(collector.adminToken)"
        request.headers["If-None-Match"] = "*"
        request.body = Array(#"{"text":"Spring sale"}"#.utf8)
        #expect(try await URLSessionTransport().send(request).status == 200)
        #expect(try await shared.pull(namespace: "acme", scenarioID: "banner")?.values["text"] == "Spring sale")
        // A user with a forged signature is refused.
        let forged = HTTPStoreBackend(
            collector: collector.baseURL, writeKey: collector.writeKey,
            user: HTTPStoreBackend.User(id: "alice", signature: LiveCollector.user("mallory").signature))
        let denied = await expectStoreError(.backendFailure) {
            try await forged.pull(namespace: "acme", scenarioID: "banner")
        }
        #expect(denied?.message.contains("HTTP 403") == true, "\(String(describing: denied))")
        try await collector.stop()
    }

    @Test func theReservedAndEmptyNamesAreRefusedBeforeAnythingIsSent() async throws {
        let collector = try await LiveCollector.start()
        let backend = HTTPStoreBackend(collector: collector.baseURL, writeKey: collector.writeKey)
        let reserved = await expectStoreError(.backendFailure) {
            _ = try await backend.push(["a": 1], namespace: "acme", scenarioID: "-", precondition: .ifAbsent)
        }
        #expect(reserved?.message.contains("reserved") == true)
        #expect(try await backend.pull(namespace: "acme", scenarioID: nil) == nil)
        let empty = await expectStoreError(.backendFailure) { try await backend.pull(namespace: "", scenarioID: "s") }
        #expect(empty?.keyPath == "/s")
        _ = await expectStoreError(.backendFailure) { try await backend.pull(namespace: "n", scenarioID: "") }
        try await collector.stop()
    }

    @Test func failuresNameTheMethodTheURLAndTheStatus() async throws {
        let collector = try await LiveCollector.start()
        let wrongKey = HTTPStoreBackend(
            collector: collector.baseURL, writeKey: "not-the-key", user: LiveCollector.user("u"))
        let url = "http://127.0.0.1:\(collector.port)/v1/users/u/scenario/acme/checkout"
        let unauthorized = await expectStoreError(.backendFailure) {
            _ = try await wrongKey.push(["a": 1], namespace: "acme", scenarioID: "checkout", precondition: .ifAbsent)
        }
        #expect(unauthorized?.message.hasPrefix("PUT \(url): HTTP 401") == true, "\(String(describing: unauthorized))")
        #expect(unauthorized?.keyPath == "acme/checkout")

        let backend = HTTPStoreBackend(
            collector: collector.baseURL, writeKey: collector.writeKey, user: LiveCollector.user("u"))
        let long = String(repeating: "x", count: 201)
        let tooLong = await expectStoreError(.backendFailure) {
            try await backend.pull(namespace: long, scenarioID: "s")
        }
        #expect(
            tooLong?.message.contains("/v1/users/u/scenario/\(long)/s: HTTP 400") == true,
            "\(String(describing: tooLong))")

        try await collector.stop()
        let down = await expectStoreError(.backendFailure) {
            try await backend.pull(namespace: "acme", scenarioID: "checkout")
        }
        #expect(down?.message.hasPrefix("GET \(url): ") == true, "\(String(describing: down))")
    }

    @Test func answersThatAreNotADocumentAreFailuresNotData() async throws {
        let server = try TestHTTPServer { request in
            switch request.path {
            case "/v1/scenario/n/array": return .json([1, 2], headers: ["ETag": "\"1\""])
            case "/v1/scenario/n/untagged": return .json(["a": 1])
            default: return .text("not json", headers: ["ETag": "\"1\""])
            }
        }
        let backend = HTTPStoreBackend(collector: server.baseURL, writeKey: "wk")
        let array = await expectStoreError(.backendFailure) {
            try await backend.pull(namespace: "n", scenarioID: "array")
        }
        #expect(
            array?.message.contains("HTTP 200 with array, not a JSON object") == true, "\(String(describing: array))")
        let untagged = await expectStoreError(.backendFailure) {
            try await backend.pull(namespace: "n", scenarioID: "untagged")
        }
        #expect(untagged?.message.contains("without an ETag") == true, "\(String(describing: untagged))")
        let text = await expectStoreError(.backendFailure) {
            try await backend.pull(namespace: "n", scenarioID: "text")
        }
        #expect(text?.message.contains("not JSON") == true, "\(String(describing: text))")
        server.stop()
    }
}
