import Foundation
import Logging
import Testing
import TouchpointCommands
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

struct CollectorServerTests {
    static func configuration(_ directory: TemporaryDirectory) -> CollectorConfiguration {
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.url)
        configuration.logger.logLevel = .warning
        return configuration
    }

    @Test func startsOnAFreePortAndKeepsCredentialsAndDataAcrossRestarts() async throws {
        let directory = try TemporaryDirectory(prefix: "collector-live")
        let body = TestMessages.batch((0..<10).map { TestMessages.track("e", id: "restart-\($0)") })

        let first = try await CollectorServer(configuration: Self.configuration(directory)).start()
        #expect(first.port > 0)
        #expect(first.writeKey.count == 32)
        #expect(first.adminToken.count == 48)
        let client = LiveClient(port: first.port)
        let stored = try await client.postBatch(body, writeKey: first.writeKey)
        #expect(stored.status == 200)
        #expect(try JSONParser.parse(stored.body)["accepted"] == 10)
        let credentials = (first.writeKey, first.adminToken)
        try await first.shutdown()

        let second = try await CollectorServer(configuration: Self.configuration(directory)).start()
        #expect((second.writeKey, second.adminToken) == credentials)
        let retried = try await LiveClient(port: second.port).postBatch(body, writeKey: second.writeKey)
        #expect(try JSONParser.parse(retried.body)["duplicates"] == 10)
        #expect(try await LiveClient(port: second.port).count(adminToken: second.adminToken) == 10)
        try await second.shutdown()

        let file = try #require(try AtomicFile.read(directory.appending(CollectorCredentials.fileName).path))
        #expect(try JSONParser.parse(file)["writeKey"]?.stringValue == credentials.0)
    }

    /// A damaged credentials file stops the start with the file and member named, and is left as
    /// it is (replacing it would silently change the keys every app was shipped with).
    @Test(arguments: [
        ("{\"writeKey\": ", "invalid JSON"), ("[\"k\"]", "expected an object, found array"),
        ("{\"writeKey\": 42}", "writeKey: expected a string, found number"),
    ])
    func aDamagedCredentialsFileIsReportedAndKept(contents: String, problem: String) throws {
        let directory = try TemporaryDirectory(prefix: "collector-credentials")
        let file = directory.appending(CollectorCredentials.fileName).path
        try AtomicFile.write(Array(contents.utf8), to: file)
        #expect {
            _ = try CollectorCredentials.resolve(directory: directory.url, writeKey: nil, adminToken: nil)
        } throws: { error in
            guard let error = error as? CollectorError else { return false }
            return error.code == .invalidConfiguration && error.message.contains(file)
                && error.message.contains(problem)
        }
        #expect(try AtomicFile.read(file) == Array(contents.utf8))
    }

    /// A zone that is not an IANA name, or a suppression key that is not 64 hex digits, stops the
    /// start with the option and the value named; nothing is listening.
    @Test(arguments: [
        ("zone", "Mars/Olympus", "--time-zone: \"Mars/Olympus\" is not an IANA time zone"),
        ("web zone", "UTC+25", "the time zone of source \"web\": \"UTC+25\""),
        ("key", "abc", "the suppression key"), ("key", String(repeating: "g", count: 64), "must be 64 hex digits"),
    ])
    func aBadTimeZoneOrSuppressionKeyStopsTheStart(setting: String, value: String, message: String) async throws {
        let directory = try TemporaryDirectory(prefix: "collector-settings")
        var configuration = Self.configuration(directory)
        switch setting {
        case "zone": configuration.timeZone = value
        case "web zone":
            configuration.additionalSources = [
                CollectorSource(id: "web", writeKey: "web-key-0123456789", timeZone: value)
            ]
        default: configuration.suppressionKey = value
        }
        await #expect {
            _ = try await CollectorServer(configuration: configuration).start()
        } throws: { error in
            guard let error = error as? CollectorError else { return false }
            return error.code == .invalidConfiguration && error.message.contains(message)
        }
    }

    /// A data directory made before suppression keys gains one, kept across restarts; the write
    /// key and admin token it holds stay as they were.
    @Test func anOlderCredentialsFileGainsASuppressionKey() throws {
        let directory = try TemporaryDirectory(prefix: "collector-credentials")
        let file = directory.appending(CollectorCredentials.fileName).path
        let older = #"{"adminToken":"token-0123456789abcdef","writeKey":"key-0123456789abcdef"}"#
        try AtomicFile.write(Array(older.utf8), to: file)
        let first = try CollectorCredentials.resolve(directory: directory.url, writeKey: nil, adminToken: nil)
        #expect(first.writeKey == "key-0123456789abcdef" && first.adminToken == "token-0123456789abcdef")
        #expect(SuppressionKey(hex: first.suppressionKey) != nil)
        let again = try CollectorCredentials.resolve(directory: directory.url, writeKey: nil, adminToken: nil)
        #expect(again.suppressionKey == first.suppressionKey)
    }

    @Test func explicitCredentialsWin() async throws {
        let directory = try TemporaryDirectory(prefix: "collector-live")
        var configuration = Self.configuration(directory)
        configuration.writeKey = "given-key-0123456789"
        configuration.adminToken = "given-token-0123456789"
        let collector = try await CollectorServer(configuration: configuration).start()
        #expect(collector.writeKey == "given-key-0123456789")
        let response = try await LiveClient(port: collector.port).postBatch(
            TestMessages.batch([TestMessages.track("e")]), writeKey: "given-key-0123456789")
        #expect(response.status == 200)
        try await collector.shutdown()
    }

    @Test func refusesAPortInUse() async throws {
        let directory = try TemporaryDirectory(prefix: "collector-live")
        let first = try await CollectorServer(configuration: Self.configuration(directory)).start()
        var configuration = Self.configuration(try TemporaryDirectory(prefix: "collector-live"))
        configuration.port = first.port
        await #expect(throws: (any Error).self) {
            let second = try await CollectorServer(configuration: configuration).start()
            try await second.shutdown()
        }
        try await first.shutdown()
    }

    @Test func withRunningShutsTheCollectorDownWhenItsBodyThrows() async throws {
        let directory = try TemporaryDirectory(prefix: "collector-with-running")
        let port = Locked(0)
        await #expect(throws: TestFailure.self) {
            try await CollectorServer(configuration: Self.configuration(directory)).withRunning { collector in
                port.withLock { $0 = collector.port }
                throw TestFailure("the body failed")
            }
        }
        #expect(throws: RawConnection.Failure.self) { try RawConnection(port: port.value) }
        // Its database was closed: a collector over the same directory opens it and finds it empty.
        let stored = try await CollectorServer(configuration: Self.configuration(directory)).withRunning { collector in
            try await collector.services.query.counts(source: "default").events
        }
        #expect(stored == 0)
    }

    @Test func gracefulShutdownKeepsEveryAcknowledgedEvent() async throws {
        let directory = try TemporaryDirectory(prefix: "collector-shutdown")
        let collector = try await CollectorServer(configuration: Self.configuration(directory)).start()
        let port = collector.port
        let writeKey = collector.writeKey
        let acknowledged = Locked<Set<String>>([])
        let started = Locked(0)
        // Four clients send batches until the server goes away.
        let senders = (0..<4).map { client in
            Task {
                await onOwnThread {
                    let connection = HTTPConnection(host: "127.0.0.1", port: port, timeoutSeconds: 20)
                    for round in 0..<400 {
                        let ids = (0..<20).map { "c\(client)-r\(round)-\($0)" }
                        let body = TestMessages.batch(ids.map { TestMessages.track("e", id: $0) })
                        started.withLock { $0 += 1 }
                        guard
                            let response = try? connection.send(
                                method: "POST", path: "/v1/batch",
                                headers: [("Authorization", TestMessages.basic(writeKey))], body: body),
                            response.status == 200
                        else { return }
                        acknowledged.withLock { $0.formUnion(ids) }
                    }
                }
            }
        }
        // Let some requests through, then stop while others are in flight.
        while started.value < 40 { try await Task.sleep(for: .milliseconds(5)) }
        try await collector.shutdown()
        for sender in senders { await sender.value }

        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending(CollectorConfiguration.sqliteFileName).path,
            logger: PostgresTestEnvironment.logger)
        var stored = Set<String>()
        var cursor: String?
        repeat {
            let page = try await storage.events(
                source: "default", filter: EventFilter(), page: PageRequest(limit: 1000, cursor: cursor))
            stored.formUnion(page.items.map(\.messageId))
            cursor = page.nextCursor
        } while cursor != nil
        try await storage.close()
        #expect(acknowledged.value.count >= 40 * 20 / 2)
        #expect(acknowledged.value.isSubset(of: stored))
    }
}
