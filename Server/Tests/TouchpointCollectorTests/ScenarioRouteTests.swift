import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

struct ScenarioRouteTests {
    static func headers(_ condition: (HTTPField.Name, String)? = nil) -> HTTPFields {
        var fields = HTTPFields.basic(RouterHarness.writeKey)
        if let condition { fields[condition.0] = condition.1 }
        return fields
    }

    @Test func createsAndUpdatesWithOptimisticConcurrency() async throws {
        try await RouterHarness.run { client, _ async throws in
            let uri = "/v1/scenario/checkout/step-2"
            #expect(try await client.execute(uri: uri, method: .get, headers: Self.headers()).status == .notFound)

            let unconditional = try await client.execute(
                uri: uri, method: .put, headers: Self.headers(), body: ByteBuffer(string: #"{"cart":1}"#))
            #expect(unconditional.status == .preconditionRequired)

            let created = try await client.execute(
                uri: uri, method: .put, headers: Self.headers((.ifNoneMatch, "*")),
                body: ByteBuffer(string: #"{"cart":1}"#))
            #expect(created.status == .ok)
            #expect(created.headers[.eTag] == "\"1\"")

            let again = try await client.execute(
                uri: uri, method: .put, headers: Self.headers((.ifNoneMatch, "*")),
                body: ByteBuffer(string: #"{"cart":9}"#))
            #expect(again.status == .preconditionFailed)

            let updated = try await client.execute(
                uri: uri, method: .put, headers: Self.headers((.ifMatch, "\"1\"")),
                body: ByteBuffer(string: #"{"cart":2}"#))
            #expect(updated.status == .ok)
            #expect(updated.headers[.eTag] == "\"2\"")

            let stale = try await client.execute(
                uri: uri, method: .put, headers: Self.headers((.ifMatch, "\"1\"")),
                body: ByteBuffer(string: #"{"cart":3}"#))
            #expect(stale.status == .preconditionFailed)
            #expect(try stale.json["error"] == "checkout/step-2: the stored version is \"2\"")

            let read = try await client.execute(uri: uri, method: .get, headers: Self.headers())
            #expect(read.status == .ok)
            #expect(read.headers[.eTag] == "\"2\"")
            #expect(String(buffer: read.body) == #"{"cart":2}"#)

            let notModified = try await client.execute(
                uri: uri, method: .get, headers: Self.headers((.ifNoneMatch, "\"2\"")))
            #expect(notModified.status == .notModified)
        }
    }

    @Test func acceptsTheWriteKeyAsAQueryParameterAndKeepsSourcesApart() async throws {
        try await RouterHarness.run { client, _ async throws in
            var headers = HTTPFields()
            headers[.ifNoneMatch] = "*"
            let created = try await client.execute(
                uri: "/v1/scenario/n/s?writeKey=web-key", method: .put, headers: headers, body: ByteBuffer(string: "{}")
            )
            #expect(created.status == .ok)
            let otherSource = try await client.execute(uri: "/v1/scenario/n/s", method: .get, headers: Self.headers())
            #expect(otherSource.status == .notFound)
            let noKey = try await client.execute(uri: "/v1/scenario/n/s", method: .get)
            #expect(noKey.status == .unauthorized)
        }
    }

    @Test(arguments: [("[1,2]", 400), ("{", 400), ("\"text\"", 400)])
    func refusesBodiesThatAreNotObjects(body: String, status: Int) async throws {
        try await RouterHarness.run { client, _ async throws in
            let response = try await client.execute(
                uri: "/v1/scenario/n/s", method: .put, headers: Self.headers((.ifNoneMatch, "*")),
                body: ByteBuffer(string: body))
            #expect(response.status.code == status)
        }
    }
}
