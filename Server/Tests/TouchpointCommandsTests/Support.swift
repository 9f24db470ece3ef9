import Foundation
import Logging
import Testing
import TouchpointCollector
import TouchpointCommands
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

/// A recorder over a fresh directory and a Segment-style collector on 127.0.0.1, for driving
/// `touchpoint send` against.
struct SendFixture {
    static let writeKey = "wk_test"

    let directory: TemporaryDirectory
    let recorder: EventRecorder
    let collector: TestCollector
    let server: TestHTTPServer

    /// - Parameters:
    ///   - collector: the collector to serve (a fresh one by default).
    ///   - handler: answers instead of the collector (it can pass requests on to `collector.handle`).
    init(
        collector: TestCollector = TestCollector(writeKey: SendFixture.writeKey),
        handler: TestHTTPServer.Handler? = nil
    ) throws {
        directory = try TemporaryDirectory(prefix: "send")
        recorder = EventRecorder(directory: directory.url)
        self.collector = collector
        server = try TestHTTPServer(handler: handler ?? collector.handle)
    }

    /// Records `count` events named `tap` with an `index` property, returning their ids.
    @discardableResult
    func record(_ count: Int, from start: Int = 0) -> [String] {
        (start..<(start + count)).compactMap { index in
            recorder.record("tap", properties: ["index": .int(index)])?.messageId
        }
    }
}

/// Files of the SDK package that these tests share with its own tests (one copy, read in place).
enum Fixture {
    /// The repository's root: this file is `Server/Tests/TouchpointCommandsTests/Support.swift`.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The survey seed README's example config, byte for byte.
    static var seedURL: URL {
        get throws {
            let url = repository.appendingPathComponent("Tests/TouchpointSurveysTests/Fixtures/seed-survey.json")
            try #require(FileManager.default.fileExists(atPath: url.path), "missing \(url.path)")
            return url
        }
    }

    static var seedBytes: [UInt8] {
        get throws { Array(try Data(contentsOf: seedURL)) }
    }
}

/// A real collector on a free port of 127.0.0.1 over a fresh data directory, for the commands
/// that talk to one, and requests to it with the load generator's own client.
enum LocalCollector {
    /// Runs `body` against a collector; shut down afterwards, whether `body` throws or not.
    static func run<Result: Sendable>(_ body: (RunningCollector) async throws -> Result) async throws -> Result {
        let directory = try TemporaryDirectory(prefix: "commands-collector")
        defer { withExtendedLifetime(directory) {} }
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.url)
        configuration.logger.logLevel = .warning
        return try await CollectorServer(configuration: configuration).withRunning(body)
    }

    /// One request to `collector`, on a thread of its own (the client blocks).
    static func send(
        to collector: RunningCollector, method: String, path: String, headers: [(String, String)] = [],
        body: [UInt8] = []
    ) async throws -> HTTPConnection.Response {
        let port = collector.port
        return try await onOwnThread {
            try HTTPConnection(host: "127.0.0.1", port: port, timeoutSeconds: 20).send(
                method: method, path: path, headers: headers, body: body)
        }
    }

    /// `POST /v1/batch` with the default source's write key.
    static func post(_ batch: [UInt8], to collector: RunningCollector) async throws -> JSONValue {
        let response = try await send(
            to: collector, method: "POST", path: "/v1/batch",
            headers: [("Authorization", TransportHeaders.basicAuthorization(user: collector.writeKey))], body: batch)
        guard response.status == 200 else {
            throw TestFailure("POST /v1/batch: HTTP \(response.status) \(response.text)")
        }
        return try JSONParser.parse(response.body)
    }

    /// `GET path` of the query API with the admin token, as JSON.
    static func query(_ path: String, of collector: RunningCollector) async throws -> JSONValue {
        let response = try await send(
            to: collector, method: "GET", path: path, headers: [("Authorization", "Bearer \(collector.adminToken)")])
        guard response.status == 200 else { throw TestFailure("GET \(path): HTTP \(response.status) \(response.text)") }
        return try JSONParser.parse(response.body)
    }
}
