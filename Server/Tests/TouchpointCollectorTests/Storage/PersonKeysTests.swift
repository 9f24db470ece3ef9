import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// The numbers analytics counts people by (`PersonKeys`), where writers meet.
struct PersonKeysTests {
    /// PostgreSQL: another writer numbers a person after the ingest statement's snapshot was taken
    /// and commits while the statement waits for its row. The event still gets that number (a
    /// conflict that did nothing would have left it without one, uncounted by every analysis),
    /// and an identify in the same batch records the merge.
    @Test(.enabled(if: PostgresTestEnvironment.enabled))
    func aPersonAnotherWriterNumbersMeanwhileKeepsTheEventsNumber() async throws {
        try await withStorage(.postgres) { storage async throws in
            let (release, releaser) = AsyncStream<Void>.makeStream()
            let numbered = Locked(false)
            let other = Task {
                try await storage.backend.write { transaction in
                    _ = try await transaction.query(
                        "INSERT INTO person_keys (source, person) VALUES ('default', 'anon-race'), ('default', 'user-race')",
                        [])
                    numbered.withLock { $0 = true }
                    for await _ in release { break }
                }
            }
            #expect(await eventually { numbered.withLock { $0 } })
            let ingest = Task {
                try await storage.insert(
                    [
                        TestMessages.ingest("browse", id: "m1", user: nil, anonymous: "anon-race"),
                        AnalyticsTests.call(.identify, id: "m2", user: "user-race", anonymous: "anon-race"),
                    ], source: "default")
            }
            // The ingest statement waits for the other writer's rows of the same people.
            let waiting = try await eventually {
                let rows = try await storage.backend.query(
                    "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
                    [])
                return (rows.first?.first?.int ?? 0) > 0
            }
            #expect(waiting)
            releaser.yield()
            releaser.finish()
            try await other.value
            #expect(try await ingest.value == [true, true])

            func number(_ sql: String) async throws -> Int64? {
                try await storage.backend.query(sql, []).first?.first?.int
            }
            let anonymous = try #require(
                try await number("SELECT person_key FROM person_keys WHERE person = 'anon-race'"))
            let user = try #require(try await number("SELECT person_key FROM person_keys WHERE person = 'user-race'"))
            #expect(try await number("SELECT person_key FROM events WHERE message_id = 'm1'") == -anonymous)
            #expect(try await number("SELECT person_key FROM events WHERE message_id = 'm2'") == user)
            #expect(
                try await number("SELECT user_key FROM person_merges WHERE anonymous_key = \(-anonymous)") == user)
            #expect(try await number("SELECT COUNT(*) FROM person_keys") == 2)
        }
    }

    /// SQLite's writer remembers the numbers of recent writes' people, and never one that may
    /// now be someone else's: a deletion makes it forget them all, and a write that rolled back
    /// leaves nothing behind (SQLite gives the newest number again after either).
    @Test func theWriterRemembersNumbersOnlyWhileTheyAreTheirPeoples() async throws {
        try await withStorage(.sqlite) { storage async throws in
            let cache = try #require(storage.sqliteWriter?.people)
            func number(_ person: String) async throws -> Int64? {
                try await storage.backend.query("SELECT person_key FROM person_keys WHERE person = ?", [.text(person)])
                    .first?.first?.int
            }
            func eventNumber(_ id: String) async throws -> Int64? {
                try await storage.backend.query(
                    "SELECT person_key FROM events WHERE touchpoint_id(message_id) = ?", [.text(id)]
                ).first?.first?.int
            }
            func send(_ id: String, user: String) async throws -> Bool {
                let stored = try await storage.insert(
                    [TestMessages.ingest("e", id: id, user: user, anonymous: nil)], source: "default")
                return stored == [true]
            }
            #expect(try await send("m1", user: "alice"))
            #expect(try await send("m2", user: "bob"))
            #expect(try await send("m3", user: "alice"))
            #expect(cache.hits == 1)
            #expect(try await eventNumber("m3") == number("alice"))

            // bob, the newest number, deleted: carol gets his number; bob back gets a new one.
            let bobs = try #require(try await number("bob"))
            let deletion = StoredDeletion(
                id: "d1", source: "default", body: "{}", suppressing: false, requestedAt: 0, liftedAt: nil)
            _ = try await storage.deleteUserData(deletion, userIds: ["bob"], anonymousIds: [], suppress: [])
            #expect(try await send("m4", user: "carol"))
            #expect(try await number("carol") == bobs)
            #expect(try await send("m5", user: "bob"))
            let bobsNow = try #require(try await number("bob"))
            #expect(bobsNow != bobs)
            #expect(try await eventNumber("m5") == bobsNow)

            // A write that fails (the database may not grow) after numbering dave: not kept.
            let pages = try #require(try await storage.backend.query("PRAGMA page_count", []).first?.first?.int)
            _ = try await storage.backend.writeStatement("PRAGMA max_page_count = \(pages)", [])
            let filler = String(repeating: "x", count: 50_000)
            await #expect(throws: StorageError.self) {
                try await storage.insert(
                    [
                        TestMessages.ingest(
                            "e", id: "m6", user: "dave", anonymous: nil, properties: ["f": .string(filler)])
                    ],
                    source: "default")
            }
            _ = try await storage.backend.writeStatement("PRAGMA max_page_count = 1000000", [])
            #expect(try await number("dave") == nil)
            #expect(try await send("m7", user: "erin"))
            #expect(try await send("m8", user: "dave"))
            let daves = try #require(try await number("dave"))
            #expect(try await number("erin") != daves)
            #expect(try await eventNumber("m8") == daves)
            #expect(try await eventNumber("m7") == number("erin"))
        }
    }
}
