import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// SQLite keeps an event's message and session ids, and a session's id, in 16 bytes when they are
/// UUIDs: exactly the canonical forms pack, each reads back as the text it was, and deduplication
/// and the session reads treat a packed id and the same id as text (rows stored before) alike.
struct PackedIDTests {
    @Test func onlyTheCanonicalFormsOfOneCasePack() throws {
        let lower = "0f8e2d4c-6b3a-4e19-8c7d-5a4b3c2d1e0f"
        let packedLower = try #require(PackedID.pack(lower))
        #expect(packedLower.count == 16)
        #expect(packedLower.prefix(3) == [0x0F, 0x8E, 0x2D])
        #expect(PackedID.unpack(packedLower) == lower)
        let upper = lower.uppercased()
        let packedUpper = try #require(PackedID.pack(upper))
        #expect(packedUpper.count == 17 && packedUpper.last == PackedID.uppercase)
        #expect(PackedID.unpack(packedUpper) == upper)
        // Digits only: either case, and it reads back the same.
        let digits = "01234567-8901-2345-6789-012345678901"
        #expect(PackedID.pack(digits).flatMap(PackedID.unpack) == digits)
        for id in [
            "0f8e2d4c-6b3a-4e19-8c7d-5a4B3c2d1e0f",  // mixed case
            "{0f8e2d4c-6b3a-4e19-8c7d-5a4b3c2d1e0f}", "0f8e2d4c6b3a4e198c7d5a4b3c2d1e0f",
            "0f8e2d4c-6b3a-4e19-8c7d-5a4b3c2d1e0",  // 35 characters
            "0f8e2d4c-6b3a-4e19-8c7d-5a4b3c2d1e0ff", "0f8e2d4c_6b3a-4e19-8c7d-5a4b3c2d1e0f",
            "0f8e2d4c-6b3a4-e19-8c7d-5a4b3c2d1e0f", "0f8e2d4c-6b3a-4e19-8c7d-5a4b3c2d1e0g",
            "0f8e2d4c-6b3a-4e19-8c7d-5a4b3c2d1e0é", "", "m-1",
        ] {
            #expect(PackedID.pack(id) == nil, "\(id)")
            #expect(PackedID.Bytes(id) == nil, "\(id)")
        }
        // Packed in place (as a request's task packs an event's ids for the writer): the same bytes.
        for id in [lower, upper, digits, UUID().uuidString] {
            let inPlace = try #require(PackedID.Bytes(id))
            #expect(inPlace.withBytes { Array($0) } == PackedID.pack(id), "\(id)")
        }
        #expect(PackedID.Bytes(lower) != PackedID.Bytes(upper))
        // Not a packed id: another length, or a 17th byte that is not the mark.
        #expect(PackedID.unpack([UInt8](repeating: 1, count: 15)) == nil)
        #expect(PackedID.unpack(packedLower + [0]) == nil)
        // Random ids of both cases, every one back as it was.
        for _ in 0..<1000 {
            let id = UUID().uuidString
            for form in [id, id.lowercased()] {
                #expect(PackedID.pack(form).flatMap(PackedID.unpack) == form)
            }
        }
    }

    @Test func idsAreKeptPackedReadBackAsSentAndDeduplicatedAcrossRestarts() async throws {
        let directory = try TemporaryDirectory(prefix: "packed-ids")
        let path = directory.appending("touchpoint.sqlite").path
        let session = UUID().uuidString
        let ids = [
            UUID().uuidString.lowercased(), UUID().uuidString, "7C9E6679-7425-40de-944b-e07fc1f90ae7", "m-4",
            "{" + UUID().uuidString + "}",
        ]
        let sessions = [session, session.lowercased(), "s-3", session, nil]
        let messages = zip(ids, sessions).enumerated().map { index, pair in
            TestMessages.ingest(index == 2 ? "buy" : "view", id: pair.0, session: pair.1, at: Double(index))
        }
        var storage = try await SQLCollectorStorage.sqlite(path: path, logger: PostgresTestEnvironment.logger)
        #expect(try await storage.insert(messages, source: "default") == Array(repeating: true, count: 5))
        let types = try await storage.backend.query(
            "SELECT typeof(message_id), typeof(session_id), length(message_id) FROM events ORDER BY seq", [])
        #expect(types.map { $0[0].text } == ["blob", "blob", "text", "text", "text"])
        #expect(types.map { $0[1].text } == ["blob", "blob", "text", "blob", "null"])
        #expect(types.map { $0[2].int } == [16, 17, 36, 3, 38])
        let sessionTypes = try await storage.backend.query(
            "SELECT typeof(session_id), length(session_id) FROM sessions ORDER BY rowid", [])
        #expect(sessionTypes.map { [$0[0].text, $0[1].text] } == [["blob", "17"], ["blob", "16"], ["text", "3"]])
        try await expectReadBack(messages, from: storage)
        #expect(try await storage.insert(messages, source: "default") == Array(repeating: false, count: 5))
        try await storage.close()

        // After a restart the keys are rebuilt from the rows (SQL computes them from packed ids).
        storage = try await SQLCollectorStorage.sqlite(path: path, logger: PostgresTestEnvironment.logger)
        #expect(try await storage.insert(messages, source: "default") == Array(repeating: false, count: 5))
        try await storage.close()

        // Rows as schema 15 and earlier stored them: ids as text, in events and in sessions. The
        // upgrade to schema 16 packs the sessions' (a session is found by its id as stored) and
        // leaves the events'. Still recognised, still found by session, beside new rows of the same
        // sessions whose ids are packed, which are added to the sessions' rows, not to new ones.
        let older = directory.appending("older.sqlite").path
        let backend = try await SQLiteBackend.open(path: older, logger: PostgresTestEnvironment.logger)
        try await SchemaMigrations.migrate(backend, upTo: 8)
        try await OlderSchemas.store(messages, source: "default", in: backend)
        try await SchemaMigrations.migrate(backend, upTo: 15)
        try await backend.close()
        storage = try await SQLCollectorStorage.sqlite(path: older, logger: PostgresTestEnvironment.logger)
        let asText = try await storage.backend.query(
            "SELECT COUNT(*) FROM events WHERE typeof(message_id) = 'blob' OR typeof(session_id) = 'blob'", [])
        #expect(asText.first?.first?.int == 0)
        let packedAgain = try await storage.backend.query(
            "SELECT typeof(session_id) FROM sessions ORDER BY rowid", [])
        #expect(packedAgain.map { $0[0].text } == ["blob", "blob", "text"])
        #expect(try await storage.insert(messages, source: "default") == Array(repeating: false, count: 5))
        let more = TestMessages.ingest("buy", id: UUID().uuidString, session: session, at: 9)
        #expect(try await storage.insert([more], source: "default") == [true])
        let counts = try await storage.backend.query(
            "SELECT event_count FROM sessions ORDER BY rowid", [])
        #expect(counts.map { $0[0].int } == [3, 1, 1])
        try await expectReadBack(messages + [more], from: storage)

        // Sessions with the same last time, some ids packed and some not, paged one at a time:
        // each once, in the order of the first page.
        let tied = ["s-tied", UUID().uuidString, UUID().uuidString.lowercased(), "S-TIED"].map {
            TestMessages.ingest("view", id: UUID().uuidString, session: $0, at: 20)
        }
        #expect(try await storage.insert(tied, source: "default") == Array(repeating: true, count: 4))
        let all = try await storage.sessions(source: "default", filter: SessionFilter(), page: PageRequest(limit: 100))
        let paged = try await allPages(maximumPages: 20) { cursor in
            try await storage.sessions(
                source: "default", filter: SessionFilter(), page: PageRequest(limit: 1, cursor: cursor))
        }.items.map(\.sessionId)
        #expect(paged == all.items.map(\.sessionId))
        #expect(Set(paged) == Set(tied.compactMap(\.sessionId) + messages.compactMap(\.sessionId)))
        #expect(paged.count == 7)
        try await storage.close()
        storage = try await SQLCollectorStorage.sqlite(path: older, logger: PostgresTestEnvironment.logger)
        #expect(
            try await storage.insert(messages + [more] + tied, source: "default")
                == Array(repeating: false, count: 10))
        try await storage.close()
    }

    /// Every message reads back with its ids and JSON as sent; each session lists its events and
    /// is found by an event name it has.
    private func expectReadBack(_ messages: [IngestMessage], from storage: SQLCollectorStorage) async throws {
        let stored = try await storage.events(source: "default", filter: EventFilter(), page: PageRequest(limit: 100))
        #expect(stored.items.map(\.messageId) == messages.map(\.messageId))
        #expect(stored.items.map(\.sessionId) == messages.map(\.sessionId))
        #expect(stored.items.map(\.message) == (try messages.map { try JSONParser.parse($0.payload) }))
        let export = try await storage.exportPage(source: "default", range: TimeRange(), page: PageRequest(limit: 100))
        let exported = try export.items.map { try JSONParser.parse(Array($0.utf8))["message"] }
        #expect(exported == stored.items.map(\.message))
        for id in Set(messages.compactMap(\.sessionId)) {
            let events = try await storage.sessionEvents(
                source: "default", sessionId: id, page: PageRequest(limit: 100))
            #expect(events.items.map(\.messageId) == messages.filter { $0.sessionId == id }.map(\.messageId), "\(id)")
        }
        let buying = try await storage.sessions(
            source: "default", filter: SessionFilter(eventName: "buy"), page: PageRequest(limit: 100))
        #expect(
            Set(buying.items.map(\.sessionId))
                == Set(messages.filter { $0.name == "buy" }.compactMap(\.sessionId)))
    }
}
