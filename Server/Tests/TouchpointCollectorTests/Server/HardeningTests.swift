import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The collector as an operator and an attacker meet it: who can read its files, which keys it
/// starts with, what a `200` promises, and poisoned input.
struct HardeningTests {
    /// The permission bits of `path` (stat's `st_mode`, through FileManager).
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        guard let mode = attributes[.posixPermissions] as? Int else { throw TestFailure("no mode for \(path)") }
        return mode & 0o777
    }

    @Test func theDataDirectoryAndEveryFileInItAreTheOwnersOnly() async throws {
        let parent = try TemporaryDirectory(prefix: "collector-modes")
        let data = parent.appending("data")
        var configuration = CollectorConfiguration(port: 0, dataDirectory: data)
        configuration.logger.logLevel = .warning
        let collector = try await CollectorServer(configuration: configuration).start()
        do {
            // A write, so the WAL and its index exist too.
            let outcome = try await collector.services.ingest.ingest(
                TestMessages.batch([TestMessages.track("e", id: "mode-1")]), endpoint: .batch, source: "default")
            #expect(outcome.accepted == 1)
            #expect(try Self.mode(data.path) & 0o077 == 0, "data directory")
            for file in ["credentials.json", "touchpoint.sqlite", "touchpoint.sqlite-wal", "touchpoint.sqlite-shm"] {
                let path = data.appendingPathComponent(file).path
                let mode = try Self.mode(path)
                #expect(mode & 0o077 == 0, "\(file) is \(String(mode, radix: 8))")
                #expect(mode & 0o600 == 0o600, "\(file) is \(String(mode, radix: 8))")
            }
        } catch {
            try? await collector.shutdown()
            throw error
        }
        try await collector.shutdown()
    }

    @Test func aFileIsCreatedWithItsModeNotChangedAfterwards() throws {
        // The mode is given to open(2): with a umask of 0, a file written 0600 is 0600, and one
        // written with the default is 0644 — so nothing depends on a later chmod.
        let directory = try TemporaryDirectory(prefix: "atomic-modes")
        let previous = umask(0)
        defer { umask(previous) }
        try AtomicFile.write([1], to: directory.appending("secret").path, mode: 0o600)
        try AtomicFile.write([1], to: directory.appending("plain").path)
        try AtomicFile.createDirectory(directory.appending("private/inner").path, mode: 0o700)
        #expect(try Self.mode(directory.appending("secret").path) == 0o600)
        #expect(try Self.mode(directory.appending("plain").path) == 0o644)
        #expect(try Self.mode(directory.appending("private").path) == 0o700)
        #expect(try Self.mode(directory.appending("private/inner").path) == 0o700)
    }

    @Test(
        arguments: [
            ("", nil, "the write key (--write-key, TOUCHPOINT_WRITE_KEY) is empty"),
            ("short-key", nil, "the write key (--write-key, TOUCHPOINT_WRITE_KEY) has 9 characters"),
            (
                "a-good-long-write-key", "12345",
                "the admin token (--admin-token, TOUCHPOINT_ADMIN_TOKEN) has 5 characters"
            ),
            ("a write key with spaces", nil, "printable ASCII only"),
        ] as [(String, String?, String)])
    func startRefusesKeysThatCanBeGuessed(writeKey: String, adminToken: String?, message: String) async throws {
        let directory = try TemporaryDirectory(prefix: "collector-keys")
        var configuration = CollectorConfiguration(
            port: 0, dataDirectory: directory.url, writeKey: writeKey, adminToken: adminToken)
        configuration.logger.logLevel = .critical
        do {
            let collector = try await CollectorServer(configuration: configuration).start()
            try await collector.shutdown()
            Issue.record("started with write key \(writeKey.debugDescription)")
        } catch let error as CollectorError {
            #expect(error.code == .invalidConfiguration)
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func anAdditionalSourceWithAShortKeyIsRefusedByName() async throws {
        let directory = try TemporaryDirectory(prefix: "collector-keys")
        var configuration = CollectorConfiguration(
            port: 0, dataDirectory: directory.url, additionalSources: [CollectorSource(id: "web", writeKey: "web")])
        configuration.logger.logLevel = .critical
        await #expect(throws: CollectorError.self) {
            let collector = try await CollectorServer(configuration: configuration).start()
            try await collector.shutdown()
        }
    }

    @Test func theWritersCommitsAreFlushedBeforeTheyAreAnswered() async throws {
        // synchronous=NORMAL in WAL mode: COMMIT hands the WAL to the operating system and
        // `WALSync` fsyncs it before a write returns (and before any 200: `WALSyncTests`), so an
        // acknowledged event survives a power loss. Not OFF: checkpoints must still sync.
        let directory = try TemporaryDirectory(prefix: "collector-durable")
        let backend = try await SQLiteBackend.open(
            path: directory.appending("touchpoint.sqlite").path, logger: PostgresTestEnvironment.logger)
        #expect(try await backend.writerSetting("journal_mode")?.text == "wal")
        #expect(try await backend.writerSetting("synchronous")?.int == 1, "1 is NORMAL (2 FULL, 0 OFF)")
        _ = try await backend.writeStatement("CREATE TABLE durable (n INTEGER)", [])
        _ = try await backend.write { try await $0.query("INSERT INTO durable VALUES (1)", []) }
        _ = try await backend.writeNow { try $0.execute("INSERT INTO durable VALUES (2)") }
        #expect(backend.walSync.lastCommit == 3)
        #expect(backend.walSync.durableThrough == 3, "a write returned before its commit was flushed")
        try await backend.close()
    }

    @Test func filesOpenToOtherAccountsAreNoticed() throws {
        // What start's warnings about an existing data directory or credentials.json rest on.
        let directory = try TemporaryDirectory(prefix: "collector-open")
        let path = directory.appending("credentials.json").path
        try AtomicFile.write(Array("{}".utf8), to: path, mode: 0o600)
        #expect(!CollectorCredentials.isOpenToOthers(path))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect(CollectorCredentials.isOpenToOthers(path))
        #expect(!CollectorCredentials.isOpenToOthers(directory.appending("absent").path))
    }

    @Test(arguments: StorageKind.available)
    func aNULIsRefusedPerEventWithItsPathAndQueriesKeepWorking(kind: StorageKind) async throws {
        let body = #"""
            {"batch":[
            {"type":"track","event":"ok","messageId":"n-1","anonymousId":"a"},
            {"type":"track","event":"survey_responded","messageId":"n\u00002","anonymousId":"a"},
            {"type":"track","event":"survey_responded","messageId":"n-3","anonymousId":"a",
             "properties":{"surveyId":"s","response":"Great\u0000"}},
            {"type":"track","event":"promo_tap","messageId":"n-4","anonymousId":"a","properties":{"a\u0000b":1}},
            {"type":"track","event":"fine","messageId":"n-5","anonymousId":"a","properties":{"text":"a\\u0000b"}}
            ]}
            """#
        let request = try BatchDecoder().decode(Array(body.utf8), endpoint: .batch, receivedAt: 1_000)
        #expect(
            request.rejections.map(\.description) == [
                "batch[1].messageId: contains U+0000 (NUL), which is not accepted",
                "batch[2].properties.response: contains U+0000 (NUL), which is not accepted",
                #"batch[3].properties["a\u0000b"]: contains U+0000 (NUL), which is not accepted"#,
            ])
        // An escaped backslash before `u0000` is text, not a NUL.
        #expect(request.messages.map(\.messageId) == ["n-1", "n-5"])
        try await withStorage(kind) { storage async throws in
            #expect(try await storage.insert(request.messages, source: "default") == [true, true])
            let query = CollectorQuery(storage: storage)
            _ = try await query.surveyResults(source: "default")
            _ = try await query.promoResults(source: "default")
            #expect(try await query.events(source: "default").items.count == 2)
        }
    }

    @Test(arguments: StorageKind.available)
    func aNULStoredBeforeItWasRefusedDoesNotBreakReads(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            // As the collector stored it before ingest refused NUL: the escape in the payload text,
            // in "default"; the same events without it in "clean".
            let messages = [
                TestMessages.ingest(
                    "survey_response", id: "old-1", session: "s",
                    properties: ["id": "s1", "type": "text", "text": "fineMARK", "option": "GreatMARK"]),
                TestMessages.ingest(
                    "promo_tap", id: "old-2", session: "s", properties: ["appID": "appMARK", "currentAppID": "me"]),
            ]
            for source in ["default", "clean"] {
                #expect(try await storage.insert(messages, source: source) == [true, true])
            }
            _ = try await storage.backend.writeStatement(
                "UPDATE events SET payload = replace(payload, 'MARK', '\\u0000') WHERE source = 'default'", [])
            let stored = try await storage.backend.query(
                "SELECT payload FROM events WHERE source = 'default' ORDER BY seq", [])
            #expect(stored.first?.first?.text?.contains(#"fine\u0000"#) == true, "\(stored)")
            let query = CollectorQuery(storage: storage)
            let surveys = try await query.surveyResults(source: "default")
            #expect(surveys.count == 1)
            #expect(surveys.count == (try await query.surveyResults(source: "clean")).count)
            let answers = try await query.surveyTextAnswers(source: "default", surveyId: "s1")
            #expect(answers.items.count == 1)
            #expect(try await query.promoResults(source: "default").count == 1)
            #expect(try await query.events(source: "default").items.count == 2)
        }
    }

    @Test func theNULScanSeesEveryEscapeAndOnlyThose() {
        func scan(_ text: String) -> Bool {
            Array(text.utf8).withUnsafeBytes { MessageReader.containsEscapedNUL($0) }
        }
        #expect(scan(#""\u0000""#))
        #expect(scan(#""x\"\u0000""#))
        #expect(scan(#""\\\u0000""#))
        #expect(!scan(#""\\u0000""#))
        #expect(!scan(#""\u00001""#.replacingOccurrences(of: "0000", with: "0001")))
        #expect(!scan(#""\u000""#))
        #expect(!scan(""))
    }
}
