import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// A client that asks to close the connection is told that it is closed, so that it never sends
/// another request on it (Linux's URLSession would resend that request without its body).
struct ConnectionCloseTests {
    @Test(arguments: ["close", "Close", "keep-alive, close"])
    func aRequestThatAsksToCloseGetsConnectionCloseBack(value: String) async throws {
        try await RouterHarness.run { client, _ async throws in
            var headers = HTTPFields.bearer(RouterHarness.adminToken)
            headers[.connection] = value
            headers[.ifNoneMatch] = "*"
            let written = try await client.execute(
                uri: "/v1/scenario/n/s", method: .put, headers: headers, body: ByteBuffer(string: "{}"))
            #expect(written.status == .ok)
            #expect(written.headers[.connection] == "close")
            // Errors too.
            var basic = HTTPFields.basic(RouterHarness.writeKey)
            basic[.connection] = value
            let refused = try await client.execute(uri: "/v1/query/counts", method: .get, headers: basic)
            #expect(refused.status == .unauthorized)
            #expect(refused.headers[.connection] == "close")
        }
    }

    @Test func otherRequestsAreNotTold() async throws {
        try await RouterHarness.run { client, _ async throws in
            let response = try await client.execute(uri: "/health", method: .get)
            #expect(response.headers[.connection] == nil)
        }
    }
}
