import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector
@testable import TouchpointCommands

/// `touchpoint serve` checks config documents with the SDK's own validators (the CLI plugs them
/// in; the collector module knows only the structure).
struct ServeConfigValidationTests {
    static let validSurveys = #"""
        {"surveys":[{"id":"ask_rating","title":"Quick question","message":"How was it?",
        "response":{"type":"options","options":["Great","Okay","Poor"]},"oncePerSession":true,
        "trigger":{"event":{"name":"checkout_success","properties":{"amount":{"op":"gt","value":50}}}}}]}
        """#

    /// Structurally fine (an object with `surveys`, each with an id), wrong for the survey module.
    static let invalidSurveys = #"""
        {"surveys":[{"id":"ask_rating","title":"Quick question","message":"How was it?",
        "response":{"type":"options","options":["Great","Okay","Poor"]},
        "trigger":{"event":{"name":"checkout_success","properties":{"amount":{"op":"gtt","value":50}}}}}]}
        """#

    static let validCatalog = #"""
        {"apps":[{"id":"notes","name":"Notes","appStoreID":"123456789","iconURL":"https://example.com/notes.png",
        "category":"Productivity","tagline":{"en":"Write it down"}}]}
        """#

    /// Structurally fine, but the promo module needs an https icon.
    static let invalidCatalog = #"""
        {"apps":[{"id":"notes","name":"Notes","appStoreID":"123456789","iconURL":"http://example.com/notes.png",
        "category":"Productivity","tagline":{"en":"Write it down"}}]}
        """#

    static func put(_ client: LiveClient, _ kind: String, _ body: String, token: String) async throws
        -> LiveClient.Response
    {
        try await client.send(
            method: "PUT", path: "/v1/config/\(kind)",
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
            body: Array(body.utf8))
    }

    static func get(_ client: LiveClient, _ kind: String, writeKey: String, ifNoneMatch: String? = nil)
        async throws -> LiveClient.Response
    {
        var headers = [("Authorization", TestMessages.basic(writeKey))]
        if let ifNoneMatch { headers.append(("If-None-Match", ifNoneMatch)) }
        return try await client.send(method: "GET", path: "/v1/config/\(kind)", headers: headers)
    }

    @Test func theRegistryUsesTheSurveyAndPromoValidators() throws {
        let registry = ConfigValidatorRegistry.touchpoint
        #expect(registry.kinds == [.catalog, .surveys])
        // The structural checks alone would let both documents through.
        let surveys = try JSONParser.parse(Array(Self.invalidSurveys.utf8))
        let catalog = try JSONParser.parse(Array(Self.invalidCatalog.utf8))
        #expect(ConfigValidatorRegistry.structural.problems(in: surveys, kind: .surveys) == [])
        #expect(ConfigValidatorRegistry.structural.problems(in: catalog, kind: .catalog) == [])
        #expect(
            registry.problems(in: surveys, kind: .surveys)?.first?.path.description
                == "surveys[0].trigger.event.properties.amount.op")
        #expect(registry.problems(in: catalog, kind: .catalog)?.first?.path.description == "apps[0].iconURL")
        #expect(registry.problems(in: try JSONParser.parse(Array(Self.validSurveys.utf8)), kind: .surveys) == [])
        #expect(registry.problems(in: try JSONParser.parse(Array(Self.validCatalog.utf8)), kind: .catalog) == [])
    }

    @Test func serveRefusesASurveyConfigTheSurveyModuleRejectsAndKeepsTheGoodOne() async throws {
        let directory = try TemporaryDirectory(prefix: "serve-validation")
        let collector = try await CollectorProcess.start([
            "--data", directory.path, "--write-key", "wk-serve-0123456789", "--admin-token", "at-serve-0123456789",
        ])
        let client = LiveClient(port: collector.port)

        let good = try await Self.put(client, "surveys", Self.validSurveys, token: "at-serve-0123456789")
        #expect(good.status == 200, "\(good.text)")
        let etag = try #require(good.headers["etag"])

        let bad = try await Self.put(client, "surveys", Self.invalidSurveys, token: "at-serve-0123456789")
        #expect(bad.status == 422, "\(bad.text)")
        let problem = try JSONParser.parse(bad.body)
        #expect(problem["path"]?.stringValue == "surveys[0].trigger.event.properties.amount.op", "\(bad.text)")
        #expect(problem["error"]?.stringValue?.contains("gtt") == true, "\(bad.text)")

        // The good document is still the one served, with its ETag.
        let served = try await Self.get(client, "surveys", writeKey: "wk-serve-0123456789")
        #expect(served.status == 200)
        #expect(served.text == Self.validSurveys)
        #expect(served.headers["etag"] == etag)
        let notModified = try await Self.get(client, "surveys", writeKey: "wk-serve-0123456789", ifNoneMatch: etag)
        #expect(notModified.status == 304)

        #expect(try await collector.terminate() == 0)
    }

    @Test func aCollectorWithTheRegistryRefusesACatalogThePromoModuleRejects() async throws {
        let directory = try TemporaryDirectory(prefix: "serve-validation")
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.url, validators: .touchpoint)
        configuration.logger.logLevel = .warning
        let collector = try await CollectorServer(configuration: configuration).start()
        let client = LiveClient(port: collector.port)

        let bad = try await Self.put(client, "catalog", Self.invalidCatalog, token: collector.adminToken)
        #expect(bad.status == 422, "\(bad.text)")
        #expect(try JSONParser.parse(bad.body)["path"]?.stringValue == "apps[0].iconURL", "\(bad.text)")
        #expect(try await Self.get(client, "catalog", writeKey: collector.writeKey).status == 404)

        let good = try await Self.put(client, "catalog", Self.validCatalog, token: collector.adminToken)
        #expect(good.status == 200, "\(good.text)")
        let again = try await Self.put(client, "catalog", Self.invalidCatalog, token: collector.adminToken)
        #expect(again.status == 422)
        let served = try await Self.get(client, "catalog", writeKey: collector.writeKey)
        #expect(served.text == Self.validCatalog)
        #expect(served.headers["etag"] == good.headers["etag"])
        #expect(served.headers["etag"] != nil)

        try await collector.shutdown()
    }
}
