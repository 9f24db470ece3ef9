import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Deduplication by message keys: SipHash as its reference defines it, random ids stored once
/// across merges and restarts, ids that share a key both stored, the upgrade from schema 8.
struct MessageKeyTests {
    /// SipHash-2-4 of the bytes 0, 1, … (n of them) under the key 00 01 … 0f: values from the
    /// reference implementation's test vectors.
    @Test(
        arguments: [
            (0, 0x726f_db47_dd0e_0e31), (1, 0x74f8_39c5_93dc_67fd), (7, 0xab02_00f5_8b01_d137),
            (8, 0x93f5_f579_9a93_2462), (15, 0xa129_ca61_49be_45e5), (16, 0x3f2a_cc7f_57c2_9bdb),
            (63, 0x958a_324c_eb06_4572),
        ] as [(Int, UInt64)])
    func sipHashMatchesTheReferenceVectors(length: Int, expected: UInt64) {
        let key = MessageKey(secret: (0..<16).map(UInt8.init))!
        let message = (0..<length).map(UInt8.init)
        var whole = SipHash24(k0: key.k0, k1: key.k1)
        message.withUnsafeBufferPointer { whole.append($0) }
        #expect(whole.finalize() == expected)
        // Fed in uneven pieces, the same.
        var pieces = SipHash24(k0: key.k0, k1: key.k1)
        var rest = message[...]
        for size in [3, 1, 9, 2] + Array(repeating: 5, count: 20) where !rest.isEmpty {
            let piece = Array(rest.prefix(size))
            rest = rest.dropFirst(piece.count)
            piece.withUnsafeBufferPointer { pieces.append($0) }
        }
        #expect(pieces.finalize() == expected)
    }

    @Test func theKeyDependsOnTheSecretTheSourceAndTheId() {
        let one = MessageKey(secret: [UInt8](repeating: 1, count: 16))!
        let two = MessageKey(secret: [UInt8](repeating: 2, count: 16))!
        #expect(one(source: "s", messageId: "m") == one(source: "s", messageId: "m"))
        #expect(one(source: "s", messageId: "m") != two(source: "s", messageId: "m"))
        #expect(one(source: "s", messageId: "m") != one(source: "t", messageId: "m"))
        // The separator: ("ab", "c") is not ("a", "bc").
        #expect(one(source: "ab", messageId: "c") != one(source: "a", messageId: "bc"))
        #expect(MessageKey(secret: [UInt8](repeating: 1, count: 15)) == nil)
    }

    /// The key SQL computes (migration, trigger) is the key Swift computes (ingest).
    @Test func sqlComputesTheSameKeyAsSwift() async throws {
        try await withSQLite { storage, _ in
            let rows = try await storage.backend.query(
                "SELECT value, touchpoint_message_key(value, 'default', 'm-1') FROM storage_settings WHERE name = 'message_key_secret'",
                [])
            let secret = try await storage.backend.query(
                "SELECT hex(value) FROM storage_settings WHERE name = 'message_key_secret'", [])
            let hex = try #require(secret.first?.first?.text)
            let bytes = stride(from: 0, to: hex.count, by: 2).map {
                UInt8(
                    hex[hex.index(hex.startIndex, offsetBy: $0)..<hex.index(hex.startIndex, offsetBy: $0 + 2)],
                    radix: 16)!
            }
            let key = try #require(MessageKey(secret: bytes))
            #expect(rows.first?[1].int == key(source: "default", messageId: "m-1"))
        }
    }

    /// Random (v4) ids, resent while their keys are in memory, after they were merged into
    /// `message_keys`, and after the collector restarted: stored once each time.
    @Test func aResentBatchOfRandomIdsIsStoredOnceThroughMergesAndRestarts() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let path = directory.appending("touchpoint.sqlite").path
        let batches = (0..<6).map { batch in
            (0..<50).map { _ in TestMessages.ingest("e\(batch)", id: UUID().uuidString, at: Double(batch)) }
        }
        var storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(minimumMerge: 120))
        for batch in batches.prefix(3) {
            #expect(try await storage.insert(batch, source: "default") == Array(repeating: true, count: 50))
            #expect(try await storage.insert(batch, source: "default") == Array(repeating: false, count: 50))
        }
        // 150 keys: one merge is due.
        let keys = try #require(storage.sqliteWriter?.keys)
        await keys.waitForMerge()
        #expect(keys.mergedThrough > 0 && keys.keysInMemory < 150)
        for batch in batches.prefix(3) {
            #expect(try await storage.insert(batch, source: "default") == Array(repeating: false, count: 50))
        }
        // Some keys merged, some in memory, when the collector stops.
        #expect(try await storage.insert(batches[3], source: "default") == Array(repeating: true, count: 50))
        try await storage.close()
        storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(minimumMerge: 120))
        for batch in batches.prefix(4) {
            #expect(try await storage.insert(batch, source: "default") == Array(repeating: false, count: 50))
        }
        // The same ids from another source are other messages.
        #expect(try await storage.insert(batches[0], source: "web") == Array(repeating: true, count: 50))
        #expect(try await storage.insert(batches[4] + batches[5], source: "default").allSatisfy { $0 })
        #expect(try await storage.counts(source: "default").events == 300)
        try await storage.close()
    }

    /// Every id given one key: each is still stored once, and a resent one is still recognised,
    /// in memory, after a merge, and after a restart.
    @Test func idsThatShareAKeyAreAllStored() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let path = directory.appending("touchpoint.sqlite").path
        let messages = (0..<8).map { TestMessages.ingest("e", id: "id-\($0)") }
        func open() async throws -> SQLCollectorStorage {
            try await SQLCollectorStorage.sqlite(
                path: path, logger: PostgresTestEnvironment.logger,
                tuning: SQLiteTuning(minimumMerge: 6, keyOverride: { _, _ in 42 }))
        }
        var storage = try await open()
        #expect(try await storage.insert(Array(messages.prefix(3)), source: "default") == [true, true, true])
        #expect(try await storage.insert(Array(messages.prefix(4)), source: "default") == [false, false, false, true])
        #expect(try await storage.insert(Array(messages[4..<6]), source: "default") == [true, true])
        let keys = try #require(storage.sqliteWriter?.keys)
        await keys.waitForMerge()
        #expect(keys.mergedThrough >= 6)
        #expect(
            try await storage.insert(messages, source: "default") == [
                false, false, false, false, false, false, true, true,
            ])
        try await storage.close()
        storage = try await open()
        #expect(try await storage.insert(messages, source: "default") == Array(repeating: false, count: 8))
        let stored = try await storage.backend.query(
            "SELECT COUNT(*) FROM message_keys WHERE key = \(MessageKeyIndex.storedKey(42, seq: 1))", [])
        #expect(stored.first?.first?.int == 6)
        #expect(try await storage.counts(source: "default").events == 8)
        try await storage.close()
    }

    /// A deleted event's key goes with it (the trigger), so the table holds no key of an event
    /// that is gone.
    @Test func deletingEventsDeletesTheirKeys() async throws {
        try await withSQLite(minimumMerge: 4) { storage, keys in
            let messages = (0..<6).map {
                TestMessages.ingest("e", id: UUID().uuidString, user: $0 < 3 ? "gone" : "kept")
            }
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            await keys.waitForMerge()
            #expect(keys.mergedThrough == 6)
            #expect(try await storage.backend.query("SELECT COUNT(*) FROM message_keys", []).first?.first?.int == 6)
            _ = try await storage.backend.writeStatement("DELETE FROM events WHERE user_id = 'gone'", [])
            #expect(try await storage.backend.query("SELECT COUNT(*) FROM message_keys", []).first?.first?.int == 3)
            // A deleted message sent again is stored again, as before keys (nothing holds it).
            #expect(try await storage.insert([messages[0], messages[4]], source: "default") == [true, false])
        }
    }

    /// Keys are stored with their event's era in the top byte: a merge that crosses into the
    /// second era (the 16,777,216th seq) stores each key in its own, and every event is still
    /// recognised when sent again and forgotten when deleted, in either era.
    @Test func keysAreMergedByEraAndFoundInEach() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let path = directory.appending("touchpoint.sqlite").path
        func open() async throws -> SQLCollectorStorage {
            try await SQLCollectorStorage.sqlite(
                path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(minimumMerge: 4))
        }
        func eras(_ storage: SQLCollectorStorage) async throws -> [[SQLValue]] {
            try await storage.backend.query(
                "SELECT key >> 56, COUNT(*) FROM message_keys GROUP BY 1 ORDER BY 1", [])
        }
        let first = (0..<5).map { _ in TestMessages.ingest("e", id: UUID().uuidString) }
        let second = (0..<5).map { _ in TestMessages.ingest("e", id: UUID().uuidString) }
        var storage = try await open()
        #expect(try await storage.insert(first, source: "default").allSatisfy { $0 })
        await storage.sqliteWriter?.keys.waitForMerge()
        #expect(try await eras(storage) == [[.int(1), .int(5)]])
        // An event stored with the seq just before the second era's first (as a store of
        // 16.8 million events would have), read back into memory at the next start.
        let jump = TestMessages.ingest("e", id: UUID().uuidString)
        var insert = SQLStatement(.sqlite, "INSERT INTO events (seq, \(OlderSchemas.eventColumns)) VALUES ")
        insert.bindTuple([
            .int((1 << 24) - 2), .text("default"), .text(jump.messageId), .text("track"), .text("e"), .null,
            .text(jump.anonymousId ?? ""), .null, .int(jump.timestamp), .null, .null, .int(jump.receivedAt),
            .text(jump.payload),
        ])
        _ = try await storage.backend.writeStatement(insert.sql, insert.binds)
        try await storage.close()

        storage = try await open()
        #expect(try await storage.insert(second, source: "default").allSatisfy { $0 })
        let keys = try #require(storage.sqliteWriter?.keys)
        await keys.waitForMerge()
        #expect(keys.mergedThrough == (1 << 24) + 3)
        // The jump and the first of the second batch in era 1, the other four in era 2.
        #expect(try await eras(storage) == [[.int(1), .int(7)], [.int(2), .int(4)]])
        #expect(try await storage.insert(first + [jump] + second, source: "default").allSatisfy { !$0 })
        try await storage.close()

        storage = try await open()
        #expect(try await storage.insert(first + [jump] + second, source: "default").allSatisfy { !$0 })
        let gone = [first[0].messageId, jump.messageId, second[4].messageId]
        // (The jump's id is stored as text: compared as text.)
        var delete = SQLStatement(.sqlite, "DELETE FROM events WHERE touchpoint_id(message_id) IN ")
        delete.bindTuple(gone.map { SQLValue.text($0) })
        _ = try await storage.backend.writeStatement(delete.sql, delete.binds)
        #expect(try await storage.backend.query("SELECT COUNT(*) FROM events", []).first?.first?.int == 8)
        #expect(try await eras(storage) == [[.int(1), .int(5)], [.int(2), .int(3)]])
        #expect(
            try await storage.insert([first[0], first[1], jump, second[3], second[4]], source: "default") == [
                true, false, true, false, true,
            ])
        try await storage.close()
    }

    /// A store whose keys were merged before eras (schema 16) keeps finding them as they are, and
    /// its trigger forgets them; keys merged after the upgrade go into eras, found alongside.
    @Test func keysMergedBeforeErasAreStillFoundAfterTheUpgrade() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let path = directory.appending("touchpoint.sqlite").path
        func open() async throws -> SQLCollectorStorage {
            try await SQLCollectorStorage.sqlite(
                path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(minimumMerge: 4))
        }
        let before = (0..<6).map { _ in TestMessages.ingest("e", id: UUID().uuidString) }
        let after = (0..<6).map { _ in TestMessages.ingest("e", id: UUID().uuidString) }
        // Stored at schema 8 and keyed by schema 9, as they are, up to schema 16: the trigger
        // forgets only those.
        let backend = try await SQLiteBackend.open(path: path, logger: PostgresTestEnvironment.logger)
        try await SchemaMigrations.migrate(backend, upTo: 8)
        try await OlderSchemas.store(before, source: "default", in: backend)
        try await SchemaMigrations.migrate(backend, upTo: 16)
        let raw = try await backend.query(
            "SELECT COUNT(*) FROM message_keys JOIN events USING (seq) WHERE key = touchpoint_message_key("
                + "(SELECT value FROM storage_settings WHERE name = 'message_key_secret'), source, message_id)", [])
        #expect(raw.first?.first?.int == 6)
        try await backend.close()

        var storage = try await open()
        #expect(try await storage.schemaVersion() == SchemaMigrations.latestVersion)
        var keys = try #require(storage.sqliteWriter?.keys)
        #expect(keys.keysInMemory == 0)
        #expect(try await storage.insert(before, source: "default").allSatisfy { !$0 })
        #expect(try await storage.insert(after, source: "default").allSatisfy { $0 })
        await keys.waitForMerge()
        #expect(keys.mergedThrough == 12)
        try await storage.close()

        storage = try await open()
        keys = try #require(storage.sqliteWriter?.keys)
        #expect(keys.keysInMemory == 0)
        #expect(try await storage.insert(before + after, source: "default").allSatisfy { !$0 })
        let gone = [before[0].messageId, before[5].messageId, after[2].messageId]
        // (Ids compared as text, however they are stored.)
        var delete = SQLStatement(.sqlite, "DELETE FROM events WHERE touchpoint_id(message_id) IN ")
        delete.bindTuple(gone.map { SQLValue.text($0) })
        _ = try await storage.backend.writeStatement(delete.sql, delete.binds)
        #expect(try await storage.backend.query("SELECT COUNT(*) FROM events", []).first?.first?.int == 9)
        #expect(try await storage.backend.query("SELECT COUNT(*) FROM message_keys", []).first?.first?.int == 9)
        #expect(
            try await storage.insert([before[0], before[1], after[2], after[3]], source: "default") == [
                true, false, true, false,
            ])
        try await storage.close()
    }

    /// Schemas 9 to 11 keep every event stored under schema 8 as it was, key each one (so they are
    /// still recognised when sent again) and find them by session.
    @Test func theUpgradeKeepsEveryEventAndItsDeduplication() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let path = directory.appending("touchpoint.sqlite").path
        // At schema 8, and events stored as its ingest stored them (whole payloads, sessions).
        let backend = try await SQLiteBackend.open(path: path, logger: PostgresTestEnvironment.logger)
        try await SchemaMigrations.migrate(backend, upTo: 8)
        let messages = (0..<40).map {
            TestMessages.ingest("e\($0 % 3)", id: UUID().uuidString, session: "s\($0 % 2)", at: Double($0))
        }
        try await OlderSchemas.store(messages, source: "default", in: backend)
        let before = try await backend.query("SELECT \(OlderSchemas.eventColumns) FROM events ORDER BY seq", [])
        try await backend.close()

        let storage = try await SQLCollectorStorage.sqlite(path: path, logger: PostgresTestEnvironment.logger)
        #expect(try await storage.schemaVersion() == SchemaMigrations.latestVersion)
        #expect(
            try await storage.backend.query(
                "SELECT \(OlderSchemas.eventColumns) FROM events ORDER BY seq", []) == before)
        // Schema 13 counted what was stored.
        #expect(try await storage.counts(source: "default") == StorageCounts(events: 40, sessions: 2))
        #expect(try await storage.insert(messages, source: "default") == Array(repeating: false, count: 40))
        #expect(try await storage.backend.query("SELECT COUNT(*) FROM message_keys", []).first?.first?.int == 40)
        let session = try await storage.sessionEvents(source: "default", sessionId: "s1", page: PageRequest(limit: 100))
        #expect(
            session.items.map(\.messageId)
                == messages.enumerated().filter { $0.offset % 2 == 1 }.map(\.element.messageId))
        #expect(
            session.items.map(\.message)
                == (try messages.enumerated().filter { $0.offset % 2 == 1 }.map {
                    try JSONParser.parse($0.element.payload)
                }))
        try await storage.close()
    }

    /// The filter never misses a key it was given, passes few it was not (about 1.1 % at its
    /// capacity: six bits of ten per key; 0.25 % just built; three bits of eight passed 3.2 % and
    /// 1.2 %), and says when it holds more than it was sized for.
    @Test func theFilterHoldsEveryKeyItWasGivenAndFewOthers() {
        var generator = SeededRandomNumberGenerator(seed: 23)
        var filter = MessageKeyFilter(capacity: 100_000)
        let given = (0..<100_000).map { _ in Int64(bitPattern: generator.next()) }
        for key in given { filter.insert(key) }
        #expect(given.allSatisfy { filter.mayContain($0) })
        #expect(!filter.isFull)
        let others = (0..<100_000).map { _ in Int64(bitPattern: generator.next()) }
        let passed = others.filter { filter.mayContain($0) }.count
        #expect(passed > 700 && passed < 1_600, "\(passed) of 100,000 keys not given passed")
        // Just built (two thirds full): about 0.25 %.
        var built = MessageKeyFilter(capacity: 150_000)
        for key in given { built.insert(key) }
        let passedBuilt = others.filter { built.mayContain($0) }.count
        #expect(passedBuilt > 120 && passedBuilt < 450, "\(passedBuilt) of 100,000 keys not given passed")
        filter.insert(1)
        #expect(filter.isFull)
        #expect(MessageKeyFilter(capacity: Int.max).capacity == MessageKeyFilter.maximumCapacity)
    }

    /// Once the filter is built, a new event's key is looked up in `message_keys` only when the
    /// filter passes it; events sent again are still recognised, through merges that outgrow the
    /// filter (it is built again, larger) and a restart (built again from the table).
    @Test func newKeysSkipTheTableOnceTheFilterIsBuilt() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let path = directory.appending("touchpoint.sqlite").path
        func batch(_ size: Int) -> [IngestMessage] {
            (0..<size).map { _ in TestMessages.ingest("e", id: UUID().uuidString) }
        }
        var storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(minimumMerge: 100))
        var keys = try #require(storage.sqliteWriter?.keys)
        // No filter yet: every key is looked up in the table; the first write builds it.
        let first = batch(100)
        #expect(try await storage.insert(first, source: "default").allSatisfy { $0 })
        #expect(keys.tableLookups == 100)
        await keys.waitForMerge()
        #expect(keys.filterCapacity == 150)
        var sent = first
        for round in 0..<6 {
            let lookups = keys.tableLookups
            let new = batch(100)
            #expect(try await storage.insert(new, source: "default").allSatisfy { $0 }, "round \(round)")
            // Few of the new keys pass the filter (at most about 5 % at its capacity).
            #expect(keys.tableLookups - lookups < 20, "round \(round): \(keys.tableLookups - lookups) looked up")
            sent += new
            await keys.waitForMerge()
            #expect(try await storage.insert(sent, source: "default").allSatisfy { !$0 }, "round \(round)")
            await keys.waitForMerge()
        }
        #expect(keys.mergedThrough == 700)
        // Outgrown and built again: sized for half as many keys again as the table held then.
        let capacity = try #require(keys.filterCapacity)
        #expect(capacity > 150 && capacity >= Int(keys.mergedThrough))
        try await storage.close()

        // Started again without the filter saved at the close (as after a crash): built again from
        // the table as the store opens, before any write.
        try FileManager.default.removeItem(atPath: path + MessageKeyIndex.filterFileSuffix)
        storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(minimumMerge: 100))
        keys = try #require(storage.sqliteWriter?.keys)
        await keys.waitForMerge()
        #expect(keys.filterCapacity == 1050 && keys.tableLookups == 0)
        #expect(try await storage.insert(Array(sent.prefix(10)), source: "default").allSatisfy { !$0 })
        let lookups = keys.tableLookups
        #expect(try await storage.insert(sent, source: "default").allSatisfy { !$0 })
        #expect(keys.tableLookups - lookups == 700)
        #expect(try await storage.counts(source: "default").events == 700)
        try await storage.close()
    }

    /// A new store in a temporary directory (kept while the caller holds it) whose keys are
    /// merged once 100 are held in memory.
    static func storeMergingAt100() async throws -> (TemporaryDirectory, SQLCollectorStorage, MessageKeyIndex) {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending("touchpoint.sqlite").path, logger: PostgresTestEnvironment.logger,
            tuning: SQLiteTuning(minimumMerge: 100))
        return (directory, storage, try #require(storage.sqliteWriter?.keys))
    }

    /// The counts `/metrics` serves: keys held in memory, keys looked up in the table (each lookup
    /// counted, found or not) and the filter's keys and capacity, as a merge builds the filter.
    @Test func metricsCountKeysInMemoryTableLookupsAndTheFilter() async throws {
        let (directory, storage, keys) = try await Self.storeMergingAt100()
        defer { withExtendedLifetime(directory) {} }
        func values() -> [String] {
            keys.prometheusText().split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        }
        func expected(inMemory: Int, lookups: Int, filterKeys: Int, capacity: Int) -> [String] {
            [
                "touchpoint_message_keys_in_memory \(inMemory)",
                "touchpoint_message_key_table_lookups_total \(lookups)",
                "touchpoint_message_key_filter_keys \(filterKeys)",
                "touchpoint_message_key_filter_capacity \(capacity)",
            ]
        }
        #expect(values() == expected(inMemory: 0, lookups: 0, filterKeys: 0, capacity: 0))
        #expect(keys.prometheusText().components(separatedBy: "# TYPE ").count == 5)
        let sent = (0..<100).map { _ in TestMessages.ingest("e", id: UUID().uuidString) }
        // No filter yet: every key looked up; the write reaches the merge's threshold (the merge
        // starts at once, builds the filter and frees the keys: those counts are read after it).
        #expect(try await storage.insert(sent, source: "default").allSatisfy { $0 })
        #expect(values()[1] == "touchpoint_message_key_table_lookups_total 100")
        await keys.waitForMerge()
        #expect(values() == expected(inMemory: 0, lookups: 100, filterKeys: 100, capacity: 150))
        // Sent again: the filter passes every one of them, each looked up and found.
        #expect(try await storage.insert(sent, source: "default").allSatisfy { !$0 })
        #expect(values() == expected(inMemory: 0, lookups: 200, filterKeys: 100, capacity: 150))
        // Ten new ones, below the merge's threshold: held in memory, not yet in the filter (how
        // many of them the filter passes is chance).
        let new = (0..<10).map { _ in TestMessages.ingest("e", id: UUID().uuidString) }
        #expect(try await storage.insert(new, source: "default").allSatisfy { $0 })
        let after = values()
        let expectedAfter = expected(inMemory: 10, lookups: 0, filterKeys: 100, capacity: 150)
        #expect([after[0], after[2], after[3]] == [expectedAfter[0], expectedAfter[2], expectedAfter[3]])
        try await storage.close()
    }

    /// Before a write, a reader reads what the writer's lookup of its keys would read in
    /// `message_keys`: the stored forms of the keys the filter passes, in each era (none before
    /// the filter is built). Reading them changes no count.
    @Test func theFormsALookupWouldReadAreReadAheadOnceTheFilterIsBuilt() async throws {
        let (directory, storage, keys) = try await Self.storeMergingAt100()
        defer { withExtendedLifetime(directory) {} }
        let sqlite = try #require(storage.backend as? SQLiteBackend)
        let writer = try #require(storage.sqliteWriter)
        func rows(_ messages: [IngestMessage]) -> [SQLiteEventWriter.Row] {
            writer.rows(messages, source: "default")
        }
        let sent = (0..<100).map { _ in TestMessages.ingest("e", id: UUID().uuidString) }
        #expect(keys.storedFormsToReadAhead(rows(sent)).isEmpty)
        #expect(try await storage.insert(sent, source: "default").allSatisfy { $0 })
        await keys.waitForMerge()
        // All of them merged, in the first era: each passes the filter, one form each.
        let forms = keys.storedFormsToReadAhead(rows(sent))
        #expect(forms.count == 100)
        #expect(Set(forms) == Set(sent.map { MessageKeyIndex.storedKey(keys.key("default", $0.messageId), era: 1) }))
        let lookups = keys.tableLookups
        let sentRows = rows(sent)
        try await sqlite.read { try keys.readAhead(sentRows, on: $0) }
        #expect(keys.tableLookups == lookups && keys.formsReadAhead == 100)
        // Sent again, they are read ahead on the way to the writer, which looks each one up.
        #expect(try await storage.insert(sent, source: "default").allSatisfy { !$0 })
        #expect(keys.formsReadAhead == 200 && keys.tableLookups == lookups + 100)
        // New keys: few pass the filter.
        let new = (0..<100).map { _ in TestMessages.ingest("e", id: UUID().uuidString) }
        #expect(keys.storedFormsToReadAhead(rows(new)).count < 10)
        try await storage.close()
    }

    /// The filter is saved beside the database when the store closes, and taken at the
    /// next start: new keys skip the table from the first write, with no scan of the table first.
    @Test func aRestartTakesTheSavedFilter() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let path = directory.appending("touchpoint.sqlite").path
        func open() async throws -> SQLCollectorStorage {
            try await SQLCollectorStorage.sqlite(
                path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(minimumMerge: 100))
        }
        let sent = (0..<300).map { TestMessages.ingest("e", id: UUID().uuidString, at: Double($0)) }
        var storage = try await open()
        #expect(try await storage.insert(sent, source: "default").allSatisfy { $0 })
        try await #require(storage.sqliteWriter?.keys).waitForMerge()
        #expect(!FileManager.default.fileExists(atPath: path + MessageKeyIndex.filterFileSuffix))
        try await storage.close()
        // Saved at the close, owner-only.
        let attributes = try FileManager.default.attributesOfItem(atPath: path + MessageKeyIndex.filterFileSuffix)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        // What a save cut short would leave beside it: removed at the next start.
        let unfinished = path + MessageKeyIndex.filterFileSuffix + ".tmp-12345"
        #expect(FileManager.default.createFile(atPath: unfinished, contents: Data(repeating: 1, count: 100)))
        storage = try await open()
        #expect(!FileManager.default.fileExists(atPath: unfinished))
        let keys = try #require(storage.sqliteWriter?.keys)
        #expect(keys.mergedThrough == 300 && keys.keysInMemory == 0)
        #expect(keys.filterCapacity == 450)
        let new = (0..<100).map { _ in TestMessages.ingest("e", id: UUID().uuidString) }
        #expect(try await storage.insert(new, source: "default").allSatisfy { $0 })
        // Without it every one of these would have been looked up in the table.
        #expect(keys.tableLookups < 20, "\(keys.tableLookups) looked up")
        #expect(try await storage.insert(sent + new, source: "default").allSatisfy { !$0 })
        #expect(try await storage.counts(source: "default").events == 400)
        try await storage.close()
    }

    /// A store that opens with keys merged and none of its filter saved (a crash), and with a
    /// backlog due, builds the filter and merges the backlog as it opens, with no write to start
    /// them; one opened with its saved filter and nothing due does neither.
    ///
    /// The time limits of this suite guard against a merge that never ends, not its speed: with
    /// the whole suite running at once on two shared cores these tests took up to 80 s (0.2 s
    /// alone).
    @Test(.timeLimit(.minutes(5))) func aStartBuildsTheFilterAndMergesABacklogWithoutAWrite() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let path = directory.appending("touchpoint.sqlite").path
        func open(mergeAtStart: Bool = true) async throws -> SQLCollectorStorage {
            try await SQLCollectorStorage.sqlite(
                path: path, logger: PostgresTestEnvironment.logger,
                tuning: SQLiteTuning(minimumMerge: 100, mergeAtStart: mergeAtStart))
        }
        let merged = (0..<100).map { TestMessages.ingest("e", id: UUID().uuidString, at: Double($0)) }
        let backlog = (0..<150).map { TestMessages.ingest("e", id: UUID().uuidString, at: Double($0)) }
        var storage = try await open()
        #expect(try await storage.insert(merged, source: "default").allSatisfy { $0 })
        try await #require(storage.sqliteWriter?.keys).waitForMerge()
        try await storage.close()
        // 150 more keys written while no merge could run: a backlog at the next start.
        storage = try await open(mergeAtStart: false)
        try await #require(storage.sqliteWriter?.keys).stopMerging()
        #expect(try await storage.insert(backlog, source: "default").allSatisfy { $0 })
        try await storage.close()
        try FileManager.default.removeItem(atPath: path + MessageKeyIndex.filterFileSuffix)

        storage = try await open()
        var keys = try #require(storage.sqliteWriter?.keys)
        await keys.waitForMerge()
        #expect(keys.filterCapacity != nil && keys.mergedThrough == 250 && keys.keysInMemory == 0)
        #expect(keys.tableLookups == 0)
        #expect(try await storage.insert(merged + backlog, source: "default").allSatisfy { !$0 })
        try await storage.close()

        storage = try await open()
        keys = try #require(storage.sqliteWriter?.keys)
        let capacity = keys.filterCapacity
        await keys.waitForMerge()
        #expect(capacity != nil && keys.filterCapacity == capacity && keys.mergedThrough == 250)
        try await storage.close()
    }

    /// A saved filter is taken only when it was saved for this database, with the watermark the
    /// database has, and is intact: one saved before a merge that moved the watermark (as when the
    /// collector stops between a merge and the save), one damaged, and one of another database are
    /// each removed and the filter built again, and every event sent again is still recognised.
    @Test func aSavedFilterIsTakenOnlyForItsDatabaseAtItsWatermark() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let path = directory.appending("touchpoint.sqlite").path
        let file = path + MessageKeyIndex.filterFileSuffix
        let stale = directory.appending("stale-filter").path
        func open(_ path: String) async throws -> SQLCollectorStorage {
            try await SQLCollectorStorage.sqlite(
                path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(minimumMerge: 100))
        }
        let first = (0..<200).map { TestMessages.ingest("e", id: UUID().uuidString, at: Double($0)) }
        let second = (0..<200).map { TestMessages.ingest("e", id: UUID().uuidString, at: Double($0)) }
        var storage = try await open(path)
        #expect(try await storage.insert(first, source: "default").allSatisfy { $0 })
        try await #require(storage.sqliteWriter?.keys).waitForMerge()
        try await storage.close()
        try FileManager.default.copyItem(atPath: file, toPath: stale)
        storage = try await open(path)
        #expect(try await storage.insert(second, source: "default").allSatisfy { $0 })
        try await #require(storage.sqliteWriter?.keys).waitForMerge()
        #expect(try #require(storage.sqliteWriter?.keys).mergedThrough == 400)
        try await storage.close()

        // Each file put in place of the one saved: rejected, removed, and the filter built again.
        func expectRejected(_ replace: () throws -> Void, _ comment: Comment) async throws {
            try replace()
            let storage = try await open(path)
            let keys = try #require(storage.sqliteWriter?.keys)
            #expect(keys.filterCapacity == nil, comment)
            #expect(!FileManager.default.fileExists(atPath: file), comment)
            // The keys of the second 200 are only in the table: a filter without them would have
            // let them be stored again.
            #expect(try await storage.insert(first + second, source: "default").allSatisfy { !$0 }, comment)
            await keys.waitForMerge()
            #expect(keys.filterCapacity == 600, comment)
            try await storage.close()
        }
        try await expectRejected(
            {
                try FileManager.default.removeItem(atPath: file)
                try FileManager.default.copyItem(atPath: stale, toPath: file)
            }, "saved at watermark 200")
        try await expectRejected(
            {
                var bytes = try #require(FileManager.default.contents(atPath: file))
                bytes[bytes.count - 1] ^= 0x10
                try bytes.write(to: URL(fileURLWithPath: file))
            }, "a bit changed")
        // Another database, its keys merged to the same watermark.
        let other = directory.appending("other.sqlite").path
        let otherStorage = try await open(other)
        #expect(try await otherStorage.insert(first + second, source: "default").allSatisfy { $0 })
        try await #require(otherStorage.sqliteWriter?.keys).waitForMerge()
        #expect(try #require(otherStorage.sqliteWriter?.keys).mergedThrough == 400)
        try await otherStorage.close()
        try await expectRejected(
            {
                try FileManager.default.removeItem(atPath: file)
                try FileManager.default.copyItem(atPath: other + MessageKeyIndex.filterFileSuffix, toPath: file)
            }, "another database's")
        storage = try await open(path)
        #expect(try await storage.counts(source: "default").events == 400)
        try await storage.close()
    }

    /// A filter reads back from its saved form as it was, for the database and watermark it was
    /// saved with only, and not when cut short or changed.
    @Test func aSavedFilterReadsBackWholeOrNotAtAll() throws {
        var filter = MessageKeyFilter(capacity: 1000)
        let keys = (0..<1000).map { _ in Int64.random(in: .min ... .max) }
        for key in keys { filter.insert(key) }
        var bytes: [UInt8] = []
        try filter.write(identity: 7, watermark: 42) { bytes.append(contentsOf: $0) }
        func restored(_ bytes: [UInt8], identity: Int64 = 7, watermark: Int64 = 42) throws -> Result<
            MessageKeyFilter, MessageKeyFilter.Rejection
        > {
            var offset = 0
            return try MessageKeyFilter.restored(size: bytes.count, identity: identity, watermark: watermark) {
                $0.copyBytes(from: bytes[offset..<offset + $0.count])
                offset += $0.count
            }
        }
        func rejection(_ bytes: [UInt8], identity: Int64 = 7, watermark: Int64 = 42) throws -> MessageKeyFilter
            .Rejection?
        {
            guard case .failure(let rejection) = try restored(bytes, identity: identity, watermark: watermark) else {
                return nil
            }
            return rejection
        }
        let read = try restored(bytes).get()
        #expect(read.count == 1000 && read.capacity == 1000 && read.bytes == filter.bytes)
        #expect(bytes.count == 64 + filter.bytes)
        #expect(keys.allSatisfy(read.mayContain))
        let others = (0..<10_000).map { _ in Int64.random(in: .min ... .max) }
        #expect(others.filter(read.mayContain) == others.filter(filter.mayContain))
        #expect(try rejection(bytes, identity: 8) == .otherDatabase)
        #expect(try rejection(bytes, watermark: 43) == .otherWatermark(saved: 42))
        #expect(try rejection(Array(bytes.dropLast())) == .unreadable)
        #expect(try rejection(Array(bytes.prefix(20))) == .unreadable)
        #expect(try rejection([]) == .unreadable)
        var changed = bytes
        changed[0] ^= 1
        #expect(try rejection(changed) == .unreadable)
        // Saved by the first version (three bits of eight a key): not taken.
        changed = bytes
        changed[8] = 1
        #expect(try rejection(changed) == .unreadable)
        for place in [64, 100, bytes.count / 2, bytes.count - 1] {
            changed = bytes
            changed[place] ^= 0x40
            #expect(try rejection(changed) == .damaged, "byte \(place)")
        }
        // The count is in the checksum too.
        changed = bytes
        changed[8 + 8 * 4] ^= 1
        #expect(try rejection(changed) == .damaged)
    }

    /// While a merge moves the keys up to the newest event into the table, that event is deleted
    /// and the next one is given its seq: the merge's watermark then covers an event whose key it
    /// did not take, and it must put that key in the table too, or after a restart (which reads
    /// only the keys after the watermark back into memory) the event would be stored again.
    @Test(.timeLimit(.minutes(5))) func anEventGivenADeletedSeqDuringAMergeIsStillFoundAfterARestart() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let path = directory.appending("touchpoint.sqlite").path
        var storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(minimumMerge: 100))
        let keys = try #require(storage.sqliteWriter?.keys)
        let (taken, tookKeys) = AsyncStream.makeStream(of: Void.self)
        let (resume, resumeMerge) = AsyncStream.makeStream(of: Void.self)
        keys.afterSnapshot.withLock {
            $0 = {
                tookKeys.yield()
                for await _ in resume { break }
            }
        }
        // 100 keys in memory make a merge due; the newest event is a user's.
        var messages = (0..<99).map { TestMessages.ingest("e", id: "m\($0)", at: Double($0)) }
        messages.append(TestMessages.ingest("e", id: "theirs", user: "user-1", anonymous: "anon-1", at: 99))
        #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
        for await _ in taken { break }
        let deletion = StoredDeletion(
            id: "d1", source: "default", body: "{}", suppressing: false, requestedAt: 0, liftedAt: nil)
        #expect(
            try await storage.deleteUserData(deletion, userIds: ["user-1"], anonymousIds: [], suppress: []).events == 1)
        let late = TestMessages.ingest("e", id: "late", anonymous: "anon-2", at: 100)
        #expect(try await storage.insert([late], source: "default") == [true])
        // The case under test: the new event has the deleted one's seq, the merge's watermark.
        let seq = try await storage.backend.query("SELECT seq FROM events WHERE message_id = 'late'", [])
        #expect(seq.first?.first?.int == 100)
        resumeMerge.yield()
        await keys.waitForMerge()
        #expect(keys.mergedThrough == 100)
        #expect(try await storage.insert([late], source: "default") == [false])
        try await storage.close()

        storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(minimumMerge: 100))
        #expect(try await storage.insert([late, messages[0]], source: "default") == [false, false])
        #expect(try await storage.counts(source: "default").events == 100)
        try await storage.close()
    }

    /// A backlog of keys larger than a merge takes is merged in slices of the oldest, each moving
    /// the watermark: a restart in the middle keeps what the slices before merged.
    @Test(.timeLimit(.minutes(5))) func aBacklogIsMergedInSlicesThatOutliveARestart() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let path = directory.appending("touchpoint.sqlite").path
        func open() async throws -> SQLCollectorStorage {
            try await SQLCollectorStorage.sqlite(
                path: path, logger: PostgresTestEnvironment.logger,
                tuning: SQLiteTuning(minimumMerge: 50, maximumMerge: 100, mergeAtStart: false))
        }
        var storage = try await open()
        let keys = try #require(storage.sqliteWriter?.keys)
        // Each slice's watermark as it starts; the third slice waits until the store closes.
        let watermarks = Locked<[Int64]>([])
        let (started, sliceStarted) = AsyncStream.makeStream(of: Int.self)
        // Never yields: waiting on it ends when the merge's task is cancelled.
        let (never, held) = AsyncStream.makeStream(of: Void.self)
        keys.afterSnapshot.withLock {
            $0 = {
                let count = watermarks.withLock {
                    $0.append(keys.mergedThrough)
                    return $0.count
                }
                sliceStarted.yield(count)
                if count == 3 { for await _ in never {} }
            }
        }
        let messages = (0..<350).map { TestMessages.ingest("e", id: UUID().uuidString, at: Double($0)) }
        #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
        for await count in started where count == 3 { break }
        #expect(watermarks.value == [0, 100, 200])
        #expect(keys.keysInMemory == 150)
        try await storage.close()
        held.finish()

        storage = try await open()
        let reopened = try #require(storage.sqliteWriter?.keys)
        #expect(reopened.mergedThrough == 200 && reopened.keysInMemory == 150)
        #expect(try await storage.insert(messages, source: "default").allSatisfy { !$0 })
        await reopened.waitForMerge()
        #expect(reopened.mergedThrough == 350 && reopened.keysInMemory == 0)
        #expect(try await storage.insert(messages, source: "default").allSatisfy { !$0 })
        #expect(try await storage.counts(source: "default").events == 350)
        try await storage.close()
    }

    /// After a merge the keys leave memory a slice at a time, the lock free between slices: then
    /// the keys already freed are found in the table (the watermark moved first, so their era is
    /// sought) and the rest in memory. A first merge is the sharp case: before it no era is.
    @Test(.timeLimit(.minutes(5))) func keysFreedInSlicesAreFoundBetweenSlices() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending("touchpoint.sqlite").path, logger: PostgresTestEnvironment.logger,
            tuning: SQLiteTuning(minimumMerge: 100, freeSlice: 10))
        let keys = try #require(storage.sqliteWriter?.keys)
        let (paused, slicePaused) = AsyncStream.makeStream(of: Void.self)
        let (resume, resumeSlices) = AsyncStream.makeStream(of: Void.self)
        let pauses = Locked(0)
        keys.betweenFreedSlices.withLock {
            $0 = {
                guard
                    pauses.withLock({
                        $0 += 1; return $0
                    }) == 1
                else { return }
                slicePaused.yield()
                for await _ in resume { break }
            }
        }
        let messages = (0..<100).map { TestMessages.ingest("e", id: UUID().uuidString, at: Double($0)) }
        #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
        for await _ in paused { break }
        // One slice of ten freed, ninety keys still in memory.
        #expect(keys.mergedThrough == 100 && keys.keysInMemory == 90)
        #expect(try await storage.insert(messages, source: "default").allSatisfy { !$0 })
        resumeSlices.yield()
        await keys.waitForMerge()
        #expect(keys.keysInMemory == 0 && pauses.value == 9)
        #expect(try await storage.insert(messages, source: "default").allSatisfy { !$0 })
        #expect(try await storage.counts(source: "default").events == 100)
        try await storage.close()
    }

    /// A slice starts at the oldest key in memory, not at the watermark: after a restart, the
    /// events right after the watermark may be gone (deleted before their keys were merged).
    @Test(.timeLimit(.minutes(5))) func aSliceStartsAtTheOldestKeyInMemory() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let path = directory.appending("touchpoint.sqlite").path
        var storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger,
            tuning: SQLiteTuning(minimumMerge: 5000, maximumMerge: 5000))
        let messages = (0..<1300).map {
            TestMessages.ingest("e", id: UUID().uuidString, user: $0 < 1000 ? "gone" : nil, at: Double($0))
        }
        #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
        let deletion = StoredDeletion(
            id: "d1", source: "default", body: "{}", suppressing: false, requestedAt: 0, liftedAt: nil)
        #expect(
            try await storage.deleteUserData(deletion, userIds: ["gone"], anonymousIds: [], suppress: []).events == 1000
        )
        try await #require(storage.sqliteWriter?.keys).waitForMerge()
        #expect(try #require(storage.sqliteWriter?.keys).mergedThrough == 0)
        try await storage.close()

        // 300 keys after the watermark, the first of them at seq 1001.
        storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger,
            tuning: SQLiteTuning(minimumMerge: 50, maximumMerge: 100, mergeAtStart: false))
        let keys = try #require(storage.sqliteWriter?.keys)
        #expect(keys.mergedThrough == 0 && keys.keysInMemory == 300)
        #expect(try await storage.insert(Array(messages[1000...]), source: "default").allSatisfy { !$0 })
        await keys.waitForMerge()
        #expect(keys.mergedThrough == 1300 && keys.keysInMemory == 0)
        #expect(try await storage.insert(Array(messages[1000...]), source: "default").allSatisfy { !$0 })
        try await storage.close()
    }

    /// A store that is closing starts no merge, and a filter being built stops scanning the table
    /// (on a reader's thread, which the merge task's cancellation does not reach).
    @Test func aStoppedIndexMergesNothingAndStopsItsFilterScan() async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let path = directory.appending("touchpoint.sqlite").path
        let messages = (0..<100).map { TestMessages.ingest("e", id: "m\($0)") }
        var storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(minimumMerge: 100))
        #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
        try await #require(storage.sqliteWriter?.keys).waitForMerge()
        try await storage.close()

        // Started again without the filter saved at the close, and without a merge at the start:
        // none until a merge builds it from the table.
        try FileManager.default.removeItem(atPath: path + MessageKeyIndex.filterFileSuffix)
        storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger,
            tuning: SQLiteTuning(minimumMerge: 100, mergeAtStart: false))
        let keys = try #require(storage.sqliteWriter?.keys)
        let backend = try #require(storage.backend as? SQLiteBackend)
        #expect(keys.mergedThrough == 100 && keys.filterCapacity == nil)
        await keys.stopMerging()
        #expect(!keys.claimMerge())
        // A merge already under way stops its scan at the first key, and puts no filter in place.
        await #expect(throws: CancellationError.self) { try await keys.merge(into: backend) }
        #expect(keys.filterCapacity == nil)
        // The keys are still found, in the table.
        #expect(try await storage.insert(messages, source: "default").allSatisfy { !$0 })
        try await storage.close()
    }

    private func withSQLite(
        minimumMerge: Int = 250_000, _ body: (SQLCollectorStorage, MessageKeyIndex) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "message-keys")
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending("touchpoint.sqlite").path, logger: PostgresTestEnvironment.logger,
            tuning: SQLiteTuning(minimumMerge: minimumMerge))
        do {
            try await body(storage, try #require(storage.sqliteWriter?.keys))
            try await storage.close()
        } catch {
            try? await storage.close()
            throw error
        }
    }
}
