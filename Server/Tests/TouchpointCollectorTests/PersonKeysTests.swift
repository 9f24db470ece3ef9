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
}
