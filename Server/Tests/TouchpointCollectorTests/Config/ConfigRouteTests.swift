import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

struct ConfigRouteTests {
    static let surveys = #"{"surveys":[{"id":"ask_rating","trigger":{"event":{"name":"checkout"}}}]}"#

    @Test func servesStoredConfigsWithETagsAndCaching() async throws {
        try await RouterHarness.run(configure: { $0.configMaxAge = 120 }) { client, _ async throws in
            let missing = try await client.execute(
                uri: "/v1/config/surveys", method: .get, headers: .basic(RouterHarness.writeKey))
            #expect(missing.status == .notFound)

            let put = try await client.execute(
                uri: "/v1/config/surveys", method: .put, headers: .bearer(RouterHarness.adminToken),
                body: ByteBuffer(string: Self.surveys))
            #expect(put.status == .ok)
            let etag = "\"\(RemoteConfigService.sha256(Self.surveys))\""
            #expect(put.headers[.eTag] == etag)

            let get = try await client.execute(
                uri: "/v1/config/surveys", method: .get, headers: .basic(RouterHarness.writeKey))
            #expect(get.status == .ok)
            #expect(String(buffer: get.body) == Self.surveys)
            #expect(get.headers[.eTag] == etag)
            #expect(get.headers[.cacheControl] == "max-age=120")

            var conditional = HTTPFields.basic(RouterHarness.writeKey)
            conditional[.ifNoneMatch] = etag
            let notModified = try await client.execute(uri: "/v1/config/surveys", method: .get, headers: conditional)
            #expect(notModified.status == .notModified)
            #expect(notModified.body.readableBytes == 0)

            conditional[.ifNoneMatch] = "\"stale\""
            let changed = try await client.execute(uri: "/v1/config/surveys", method: .get, headers: conditional)
            #expect(changed.status == .ok)

            // The seed's SurveyConfigManager has only a URL: the write key may ride in the query.
            let byQuery = try await client.execute(
                uri: "/v1/config/surveys?writeKey=\(RouterHarness.writeKey)", method: .get)
            #expect(byQuery.status == .ok)
            let other = try await client.execute(uri: "/v1/config/surveys?writeKey=web-key", method: .get)
            #expect(other.status == .notFound)
        }
    }

    @Test func rejectsInvalidDocumentsWithThePathOfTheFirstProblem() async throws {
        try await RouterHarness.run { client, _ async throws in
            let body = #"{"surveys":[{"id":"a"},{"trigger":{}},{"id":"a"}]}"#
            let response = try await client.execute(
                uri: "/v1/config/surveys", method: .put, headers: .bearer(RouterHarness.adminToken),
                body: ByteBuffer(string: body))
            #expect(response.status == .unprocessableContent)
            #expect(try response.json["path"] == "surveys[1].id")
            #expect(try response.json["error"] == "surveys[1].id: missing (and 1 more problems)")
            #expect(try response.json["problems"]?.arrayValue?.count == 2)

            let catalog = try await client.execute(
                uri: "/v1/config/catalog", method: .put, headers: .bearer(RouterHarness.adminToken),
                body: ByteBuffer(string: #"{"apps":{}}"#))
            #expect(catalog.status == .unprocessableContent)
            #expect(try catalog.json["error"] == "apps: expected an array, found object")

            let unknown = try await client.execute(
                uri: "/v1/config/themes", method: .put, headers: .bearer(RouterHarness.adminToken),
                body: ByteBuffer(string: "{}"))
            #expect(unknown.status == .notFound)
        }
    }

    @Test func usesPluggedInValidators() async throws {
        var validators = ConfigValidatorRegistry.structural
        validators.register(.surveys) { document in
            document["surveys"]?[0]?["trigger"] == nil
                ? [
                    JSONProblem(
                        path: JSONPath.root.appending("surveys").appending(index: 0).appending("trigger"),
                        message: "missing")
                ]
                : []
        }
        try await RouterHarness.run(configure: { $0.validators = validators }) { client, _ async throws in
            let response = try await client.execute(
                uri: "/v1/config/surveys", method: .put, headers: .bearer(RouterHarness.adminToken),
                body: ByteBuffer(string: #"{"surveys":[{"id":"a"}]}"#))
            #expect(response.status == .unprocessableContent)
            #expect(try response.json["path"] == "surveys[0].trigger")
        }
    }

    @Test func writesNeedTheAdminTokenAndCanTargetASource() async throws {
        try await RouterHarness.run { client, _ async throws in
            let noToken = try await client.execute(
                uri: "/v1/config/catalog", method: .put, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(string: #"{"apps":[]}"#))
            #expect(noToken.status == .unauthorized)

            let toWeb = try await client.execute(
                uri: "/v1/config/catalog?source=web", method: .put, headers: .bearer(RouterHarness.adminToken),
                body: ByteBuffer(string: #"{"apps":[{"id":"notes"}]}"#))
            #expect(toWeb.status == .ok)
            let webRead = try await client.execute(uri: "/v1/config/catalog", method: .get, headers: .basic("web-key"))
            #expect(String(buffer: webRead.body) == #"{"apps":[{"id":"notes"}]}"#)
            let defaultRead = try await client.execute(
                uri: "/v1/config/catalog", method: .get, headers: .basic(RouterHarness.writeKey))
            #expect(defaultRead.status == .notFound)

            let unknownSource = try await client.execute(
                uri: "/v1/config/catalog?source=nope", method: .put, headers: .bearer(RouterHarness.adminToken),
                body: ByteBuffer(string: #"{"apps":[]}"#))
            #expect(unknownSource.status == .notFound)

            let noKey = try await client.execute(uri: "/v1/config/catalog", method: .get)
            #expect(noKey.status == .unauthorized)
        }
    }
}
