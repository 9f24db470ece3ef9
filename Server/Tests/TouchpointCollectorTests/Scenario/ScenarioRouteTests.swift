import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// Scenario documents over HTTP: optimistic concurrency, and who may read and write what — a
/// namespace's own documents (read with the public write key, written with the admin token) and
/// each user's (the write key and the user's signature from the app's backend).
struct ScenarioRouteTests {
    static let secret = "identity-secret-0123456789"

    static func run(_ body: @Sendable @escaping (any TestClientProtocol) async throws -> Void) async throws {
        try await RouterHarness.run(configure: { $0.identitySecret = secret }) { client, _ async throws in
            try await body(client)
        }
    }

    /// The write key, the signature of `user` when given, and a condition.
    static func headers(
        user: String? = nil, signedAs signer: String? = nil, _ condition: (HTTPField.Name, String)? = nil
    ) -> HTTPFields {
        var fields = HTTPFields.basic(RouterHarness.writeKey)
        if let name = signer ?? user {
            fields[HTTPField.Name(IdentityVerification.headerName)!] = IdentityVerification.signature(
                userId: name, secret: secret)
        }
        if let condition { fields[condition.0] = condition.1 }
        return fields
    }

    static func admin(_ condition: (HTTPField.Name, String)? = nil) -> HTTPFields {
        var fields = HTTPFields.bearer(RouterHarness.adminToken)
        if let condition { fields[condition.0] = condition.1 }
        return fields
    }

    @Test func theSignatureIsHexHMACSHA256OfTheUserID() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        #expect(
            IdentityVerification.signature(userId: "what do ya want for nothing?", secret: "Jefe")
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            IdentityVerification.isValid(
                "5BDCC146BF60754E6A042426089575C75A003F089D2739839DEC58B964EC3843",
                userId: "what do ya want for nothing?", secret: "Jefe"))
        #expect(!IdentityVerification.isValid("5bdcc146", userId: "what do ya want for nothing?", secret: "Jefe"))
    }

    @Test func aUsersDocumentIsWrittenWithOptimisticConcurrency() async throws {
        try await Self.run { client in
            let uri = "/v1/users/u-1/scenario/checkout/step-2"
            let user = "u-1"
            #expect(
                try await client.execute(uri: uri, method: .get, headers: Self.headers(user: user)).status == .notFound)

            let unconditional = try await client.execute(
                uri: uri, method: .put, headers: Self.headers(user: user), body: ByteBuffer(string: #"{"cart":1}"#))
            #expect(unconditional.status == .preconditionRequired)

            let created = try await client.execute(
                uri: uri, method: .put, headers: Self.headers(user: user, (.ifNoneMatch, "*")),
                body: ByteBuffer(string: #"{"cart":1}"#))
            #expect(created.status == .ok)
            #expect(created.headers[.eTag] == "\"1\"")

            let again = try await client.execute(
                uri: uri, method: .put, headers: Self.headers(user: user, (.ifNoneMatch, "*")),
                body: ByteBuffer(string: #"{"cart":9}"#))
            #expect(again.status == .preconditionFailed)

            let updated = try await client.execute(
                uri: uri, method: .put, headers: Self.headers(user: user, (.ifMatch, "\"1\"")),
                body: ByteBuffer(string: #"{"cart":2}"#))
            #expect(updated.status == .ok)
            #expect(updated.headers[.eTag] == "\"2\"")

            let stale = try await client.execute(
                uri: uri, method: .put, headers: Self.headers(user: user, (.ifMatch, "\"1\"")),
                body: ByteBuffer(string: #"{"cart":3}"#))
            #expect(stale.status == .preconditionFailed)
            #expect(try stale.json["error"] == "checkout/step-2: the stored version is \"2\"")

            let read = try await client.execute(uri: uri, method: .get, headers: Self.headers(user: user))
            #expect(read.status == .ok)
            #expect(read.headers[.eTag] == "\"2\"")
            #expect(String(buffer: read.body) == #"{"cart":2}"#)

            let notModified = try await client.execute(
                uri: uri, method: .get, headers: Self.headers(user: user, (.ifNoneMatch, "\"2\"")))
            #expect(notModified.status == .notModified)
        }
    }

    @Test func aUsersDocumentNeedsThatUsersSignature() async throws {
        try await Self.run { client in
            let uri = "/v1/users/alice/scenario/prefs/theme"
            let body = ByteBuffer(string: #"{"dark":true}"#)
            for headers in [
                Self.headers((.ifNoneMatch, "*")),  // no signature
                Self.headers(user: "alice", signedAs: "bob", (.ifNoneMatch, "*")),  // bob's signature
            ] {
                let refused = try await client.execute(uri: uri, method: .put, headers: headers, body: body)
                #expect(refused.status == .forbidden)
                #expect(try refused.json["code"] == "forbidden")
                #expect(try refused.json["error"]?.stringValue?.contains("not the signature of user \"alice\"") == true)
            }
            let written = try await client.execute(
                uri: uri, method: .put, headers: Self.headers(user: "alice", (.ifNoneMatch, "*")), body: body)
            #expect(written.status == .ok)
            // Bob, signed as himself, cannot read Alice's document; his own path holds nothing.
            let bobReadsAlice = try await client.execute(
                uri: uri, method: .get, headers: Self.headers(user: "alice", signedAs: "bob"))
            #expect(bobReadsAlice.status == .forbidden)
            let bobsOwn = try await client.execute(
                uri: "/v1/users/bob/scenario/prefs/theme", method: .get, headers: Self.headers(user: "bob"))
            #expect(bobsOwn.status == .notFound)
            // Nor is it the namespace's own document.
            let shared = try await client.execute(
                uri: "/v1/scenario/prefs/theme", method: .get, headers: Self.headers())
            #expect(shared.status == .notFound)
            // The admin token reads and writes any user's documents.
            let adminRead = try await client.execute(uri: uri, method: .get, headers: Self.admin())
            #expect(String(buffer: adminRead.body) == #"{"dark":true}"#)
        }
    }

    @Test func aSourceWithoutAnIdentitySecretKeepsNoUserDocuments() async throws {
        try await Self.run { client in
            var headers = HTTPFields.basic("web-key")
            headers[HTTPField.Name(IdentityVerification.headerName)!] = IdentityVerification.signature(
                userId: "alice", secret: Self.secret)
            headers[.ifNoneMatch] = "*"
            let refused = try await client.execute(
                uri: "/v1/users/alice/scenario/n/s", method: .put, headers: headers, body: ByteBuffer(string: "{}"))
            #expect(refused.status == .forbidden)
            #expect(try refused.json["error"]?.stringValue?.contains("--identity-secret") == true)
        }
    }

    @Test func aNamespacesOwnDocumentIsReadWithTheWriteKeyAndWrittenWithTheAdminToken() async throws {
        try await Self.run { client in
            let uri = "/v1/scenario/catalog/banner"
            let byApp = try await client.execute(
                uri: uri, method: .put, headers: Self.headers((.ifNoneMatch, "*")), body: ByteBuffer(string: "{}"))
            #expect(byApp.status == .forbidden)
            #expect(try byApp.json["error"]?.stringValue?.contains("admin token") == true)
            let byAdmin = try await client.execute(
                uri: uri, method: .put, headers: Self.admin((.ifNoneMatch, "*")), body: ByteBuffer(string: #"{"v":1}"#))
            #expect(byAdmin.status == .ok)
            let read = try await client.execute(uri: uri, method: .get, headers: Self.headers())
            #expect(String(buffer: read.body) == #"{"v":1}"#)
            let noKey = try await client.execute(uri: uri, method: .get)
            #expect(noKey.status == .unauthorized)
            // Another source's write key reads another source's documents.
            let otherSource = try await client.execute(uri: "\(uri)?writeKey=web-key", method: .get)
            #expect(otherSource.status == .notFound)
        }
    }

    @Test func overwritingWhateverIsStoredNeedsTheAdminToken() async throws {
        try await Self.run { client in
            let uri = "/v1/users/u/scenario/n/s"
            _ = try await client.execute(
                uri: uri, method: .put, headers: Self.headers(user: "u", (.ifNoneMatch, "*")),
                body: ByteBuffer(string: "{}"))
            let byApp = try await client.execute(
                uri: uri, method: .put, headers: Self.headers(user: "u", (.ifMatch, "*")),
                body: ByteBuffer(string: "{}"))
            #expect(byApp.status == .forbidden)
            #expect(
                try byApp.json["error"]?.stringValue?.hasPrefix("If-Match: * overwrites whatever is stored") == true)
            let byAdmin = try await client.execute(
                uri: uri, method: .put, headers: Self.admin((.ifMatch, "*")), body: ByteBuffer(string: #"{"x":1}"#))
            #expect(byAdmin.status == .ok)
            #expect(byAdmin.headers[.eTag] == "\"2\"")
        }
    }

    @Test func namespacesStartingWithAtAreReserved() async throws {
        try await Self.run { client in
            let response = try await client.execute(
                uri: "/v1/scenario/%40user/s", method: .get, headers: Self.headers())
            #expect(response.status == .badRequest)
            #expect(try response.json["path"] == "namespace")
        }
    }

    @Test func theSourcesQuotaIsA403ThatNamesIt() async throws {
        try await RouterHarness.run(configure: {
            $0.identitySecret = Self.secret
            $0.scenarioQuota = ScenarioQuota(maximumDocuments: 1, maximumBytes: 1000)
        }) { client, _ async throws in
            let first = try await client.execute(
                uri: "/v1/users/u/scenario/n/a", method: .put, headers: Self.headers(user: "u", (.ifNoneMatch, "*")),
                body: ByteBuffer(string: "{}"))
            #expect(first.status == .ok)
            let second = try await client.execute(
                uri: "/v1/users/v/scenario/n/a", method: .put, headers: Self.headers(user: "v", (.ifNoneMatch, "*")),
                body: ByteBuffer(string: "{}"))
            #expect(second.status == .forbidden)
            #expect(try second.json["code"] == "quota_exceeded")
            #expect(
                try second.json["error"]
                    == "n/a: the source's scenario quota is 1 documents and 1000 bytes; it holds 1 documents and 2 bytes"
            )
        }
    }

    @Test(arguments: [("[1,2]", 400), ("{", 400), ("\"text\"", 400)])
    func refusesBodiesThatAreNotObjects(body: String, status: Int) async throws {
        try await Self.run { client in
            let response = try await client.execute(
                uri: "/v1/users/u/scenario/n/s", method: .put, headers: Self.headers(user: "u", (.ifNoneMatch, "*")),
                body: ByteBuffer(string: body))
            #expect(response.status.code == status)
        }
    }
}
