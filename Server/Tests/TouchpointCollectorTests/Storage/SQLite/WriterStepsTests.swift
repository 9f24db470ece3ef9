import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// SQLite's writer times each step of its writes, for `/metrics`.
struct WriterStepsTests {
    @Test func totalsAreServedAsFourCounterFamilies() {
        let steps = WriterSteps()
        steps.record(WriterSteps.Laps(spent: [.events: .milliseconds(1500), .commit: .microseconds(250)]), rows: 40)
        steps.record(WriterSteps.Laps(spent: [.events: .milliseconds(500), .keys: .seconds(2)]), rows: 2)
        for read in [true, false, true, true] { steps.recordLookAhead(read: read) }
        #expect(steps.writes == 2 && steps.rows == 42)
        #expect(steps.lookAheads == (read: 3, skipped: 1))
        #expect(steps.spent(on: .events) == .seconds(2))
        let text = steps.prometheusText()
        let samples = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(
            samples == [
                #"touchpoint_sqlite_writer_seconds_total{step="keys"} 2.0"#,
                #"touchpoint_sqlite_writer_seconds_total{step="sessions"} 0.0"#,
                #"touchpoint_sqlite_writer_seconds_total{step="people"} 0.0"#,
                #"touchpoint_sqlite_writer_seconds_total{step="contexts"} 0.0"#,
                #"touchpoint_sqlite_writer_seconds_total{step="events"} 2.0"#,
                #"touchpoint_sqlite_writer_seconds_total{step="counts"} 0.0"#,
                #"touchpoint_sqlite_writer_seconds_total{step="profiles"} 0.0"#,
                #"touchpoint_sqlite_writer_seconds_total{step="daily_people"} 0.0"#,
                #"touchpoint_sqlite_writer_seconds_total{step="commit"} 0.00025"#,
                "touchpoint_sqlite_writes_total 2",
                "touchpoint_sqlite_write_rows_total 42",
                #"touchpoint_sqlite_look_aheads_total{result="read"} 3"#,
                #"touchpoint_sqlite_look_aheads_total{result="skipped"} 1"#,
            ])
        for family in [
            "touchpoint_sqlite_writer_seconds_total", "touchpoint_sqlite_writes_total",
            "touchpoint_sqlite_write_rows_total", "touchpoint_sqlite_look_aheads_total",
        ] {
            #expect(text.contains("# TYPE \(family) counter\n"))
            #expect(text.contains("# HELP \(family) "))
        }
    }

    /// Every write that commits is timed once, with the rows it was given (a message already stored
    /// too); one that rolls back is not.
    @Test func eachCommittedWriteIsTimedStepByStep() async throws {
        let directory = try TemporaryDirectory(prefix: "writer-steps")
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending("touchpoint.sqlite").path, logger: PostgresTestEnvironment.logger)
        let steps = try #require(storage.sqliteWriter?.steps)
        #expect(steps.writes == 0 && steps.prometheusText().contains("touchpoint_sqlite_write_rows_total 0\n"))
        let first = (0..<5).map { TestMessages.ingest("e", id: "m\($0)", session: "s\($0 % 2)", user: "u\($0 % 3)") }
        #expect(try await storage.insert(first, source: "default") == Array(repeating: true, count: 5))
        #expect(steps.writes == 1 && steps.rows == 5)
        let again = [first[0], TestMessages.ingest("e", id: "m5")]
        #expect(try await storage.insert(again, source: "default") == [false, true])
        #expect(steps.writes == 2 && steps.rows == 7)
        for step in [WriterSteps.Step.keys, .sessions, .events, .commit] {
            #expect(steps.spent(on: step) > .zero, "\(step.name)")
        }

        // A write that fails rolls back and adds nothing.
        _ = try await storage.backend.writeStatement("DROP TABLE profiles", [])
        await #expect(throws: (any Error).self) {
            try await storage.insert([TestMessages.ingest("e", id: "m6", user: "u9")], source: "default")
        }
        #expect(steps.writes == 2 && steps.rows == 7)
        try await storage.close()
    }

    @Test func metricsServeTheWritersStepsOnSQLite() async throws {
        try await RouterHarness.run { client, _ async throws in
            let body = ByteBuffer(json: TestMessages.batch((0..<3).map { TestMessages.track("e", id: "m\($0)") }))
            for _ in 0..<2 {
                let response = try await client.execute(
                    uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey), body: body)
                #expect(response.status == .ok)
            }
            let text = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(text.contains("touchpoint_sqlite_writes_total 2\n"))
            #expect(text.contains("touchpoint_sqlite_write_rows_total 6\n"))
            #expect(text.contains(#"touchpoint_sqlite_writer_seconds_total{step="events"} "#))
            // Appended on a line of its own, after the collector's own families, each once.
            #expect(text.contains("\n# HELP touchpoint_sqlite_writer_seconds_total "))
            #expect(text.components(separatedBy: "# TYPE touchpoint_events_accepted_total counter").count == 2)
            #expect(text.components(separatedBy: "# TYPE touchpoint_sqlite_writes_total counter").count == 2)
            #expect(text.components(separatedBy: "# TYPE touchpoint_sqlite_look_aheads_total counter").count == 2)
            // The message keys' counts too (`MessageKeyTests` follows their values): three keys
            // held in memory until a merge.
            #expect(text.contains("\ntouchpoint_message_keys_in_memory 3\n"))
            // And the sessions' keys: the one session of these events new, so in memory.
            #expect(text.contains("\ntouchpoint_session_keys_in_memory 1\n"))
            for family in [
                "message_keys_in_memory gauge", "message_key_table_lookups_total counter",
                "session_keys_in_memory gauge", "session_key_table_lookups_total counter",
            ] {
                #expect(text.components(separatedBy: "# TYPE touchpoint_\(family)").count == 2, "\(family)")
            }
        }
    }
}
