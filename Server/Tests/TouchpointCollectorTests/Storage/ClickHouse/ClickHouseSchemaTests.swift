import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// ClickHouse's schema as its migrations make it (``ClickHouseMigrations``), against a dump
/// committed beside the SQL stores' (`Storage/Schema/Dumps/clickhouse.sql`): a migration that
/// changes the schema changes the dump too, on purpose, in the same commit. The dump is each
/// table's `SHOW CREATE TABLE` as ClickHouse 18.16 (the server CI runs) prints it, without the
/// database's name, a column a line.
///
/// To write the dump after adding a migration:
///
/// ```sh
/// TOUCHPOINT_WRITE_SCHEMA_DUMPS=1 TOUCHPOINT_TEST_CLICKHOUSE_URL=http://… \
///     swift test --package-path Server --filter ClickHouseSchemaTests
/// ```
@Suite(.enabled(if: ClickHouseTestEnvironment.enabled, "needs TOUCHPOINT_TEST_CLICKHOUSE_URL"))
struct ClickHouseSchemaTests {
    /// `events` as the first release made it (before the property arrays, `retention_cuts`,
    /// `resent_messages` and the person's hash; `person` and the properties' JSON stored), which
    /// databases made before versions may still hold.
    static let firstReleaseEvents: ClickHouseSQL = """
        CREATE TABLE IF NOT EXISTS events (
            source String,
            event String,
            type String,
            message_id String,
            time DateTime,
            time_ms UInt16,
            user_id String,
            anonymous_id String,
            person String,
            session_id String,
            properties String,
            received_at DateTime,
            payload String,
            version UInt64
        ) ENGINE = ReplacingMergeTree(version)
        PARTITION BY toYYYYMM(time)
        ORDER BY (source, event, toDate(time), message_id)
        """

    static let dumpFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Schema/Dumps/clickhouse.sql")

    @Test func theMigratedSchemaIsTheCommittedDump() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            var events = ClickHouseEvents(client: client)
            try await events.prepare()
            let dump = try await Self.dump(client)
            if ProcessInfo.processInfo.environment["TOUCHPOINT_WRITE_SCHEMA_DUMPS"] == "1" {
                try dump.write(to: Self.dumpFile, atomically: true, encoding: .utf8)
                return
            }
            let committed = try String(contentsOf: Self.dumpFile, encoding: .utf8)
            let difference = SchemaDumpTests.firstDifference(committed, dump)
            #expect(
                difference == nil,
                """
                the migrated ClickHouse schema is not clickhouse.sql: \(difference ?? ""); if a migration changed \
                it on purpose, write the dump with TOUCHPOINT_WRITE_SCHEMA_DUMPS=1 and commit it
                """)
        }
    }

    @Test func eachVersionIsRecordedOnceAndAStartAfterRecordsNone() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            #expect(try await ClickHouseMigrations.migrate(client) == [1, 2, 3, 4])
            #expect(try await ClickHouseMigrations.migrate(client) == [])
            var events = ClickHouseEvents(client: client)
            try await events.prepare()
            #expect(try await Self.versions(client) == [1, 2, 3, 4])
        }
    }

    /// Collectors that start together against a new database each finish their start: a
    /// migration another applied first (its `ALTER` then fails here) is recorded all the same.
    @Test func collectorsStartingTogetherEachStart() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        var events = ClickHouseEvents(client: client)
                        try await events.prepare()
                    }
                }
                try await group.waitForAll()
            }
            #expect(Set(try await Self.versions(client)) == [1, 2, 3, 4])
            let committed = try String(contentsOf: Self.dumpFile, encoding: .utf8)
            #expect(SchemaDumpTests.firstDifference(committed, try await Self.dump(client)) == nil)
        }
    }

    /// A collector that stopped after a migration's `ALTER` and before recording it: the next
    /// start records it rather than failing on columns that are there.
    @Test func aMigrationAppliedButNotRecordedIsRecorded() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            #expect(try await ClickHouseMigrations.migrate(client, upTo: 3) == [1, 2, 3])
            for statement in ClickHouseMigrations.all[3].statements { try await client.execute(statement) }
            #expect(try await ClickHouseMigrations.migrate(client) == [4])
            #expect(try await Self.versions(client) == [1, 2, 3, 4])
        }
    }

    @Test func aDatabaseOfANewerCollectorIsRefused() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            try await ClickHouseMigrations.migrate(client)
            try await client.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (99, now())")
            await #expect {
                var events = ClickHouseEvents(client: client)
                try await events.prepare()
            } throws: { error in
                (error as? StorageError)?.code == .migration && "\(error)".contains("schema version 99")
            }
        }
    }

    /// A table of the first release, made before versions, gets the versions it has recorded and
    /// the rest applied: then its columns are the dump's but for the two it still stores (`person`
    /// as text where the dump has the alias, and `properties`), which ingest goes on filling.
    /// Once an operator drops those, the next start adds `person` back as the alias, and the table
    /// is the dump's. Every other table is the dump's throughout.
    @Test func aFirstReleaseTableUpgradedHasTheDumpsColumns() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            try await client.execute(Self.firstReleaseEvents)
            try await client.execute(
                """
                INSERT INTO events (source, event, type, message_id, time, user_id, person, properties, payload, version)
                VALUES ('app', 'buy', 'track', 'm-1', toDateTime(1767225600), 'user-1', 'user-1', '{}', '{}', 1),
                    ('app', 'view', 'track', 'm-1', toDateTime(1767225601), 'user-1', 'user-1', '{}', '{}', 0)
                """)
            var events = ClickHouseEvents(client: client)
            try await events.prepare()
            #expect(try await Self.versions(client) == [1, 2, 3, 4])
            #expect(events.storedLegacyColumns == [.person, .properties])
            // Its copies named (both times of the id it holds twice), as in a table made before
            // resent messages were.
            let marked = try await client.rows("SELECT count() AS n FROM resent_messages")
            #expect(marked.first?["n"] == .int(2))

            let committed = Self.tables(try String(contentsOf: Self.dumpFile, encoding: .utf8))
            let upgraded = Self.tables(try await Self.dump(client))
            #expect(upgraded.keys.sorted() == committed.keys.sorted())
            for (name, table) in committed where name != "events" {
                #expect(upgraded[name]?.columns == table.columns, "\(name)")
                #expect(upgraded[name]?.engine == table.engine, "\(name)")
            }
            let dumped = try #require(committed["events"])
            let alias = "person String ALIAS if(user_id != '', user_id, anonymous_id)"
            // 18.16 lists the stored columns first, in the table's order, then the computed ones: the
            // stored `person` where the first release put it, `properties` after `session_id`.
            let legacy = dumped.columns.filter { $0 != alias }.flatMap { column in
                switch column {
                case "anonymous_id String": [column, "person String"]
                case "session_id String": [column, "properties String"]
                default: [column]
                }
            }
            #expect(upgraded["events"]?.columns == legacy)
            #expect(upgraded["events"]?.engine == dumped.engine)

            try await client.execute("ALTER TABLE events DROP COLUMN properties, DROP COLUMN person")
            try await events.prepare()
            #expect(events.storedLegacyColumns.isEmpty)
            #expect(try await Self.versions(client) == [1, 2, 3, 4])
            let freed = try #require(Self.tables(try await Self.dump(client))["events"])
            #expect(freed.columns == dumped.columns)
        }
    }

    /// The versions recorded, in order, each as often as recorded.
    static func versions(_ client: ClickHouseClient) async throws -> [Int] {
        try await client.rows("SELECT version FROM schema_migrations ORDER BY version").compactMap {
            $0["version"]?.intValue
        }
    }

    /// Each table's `SHOW CREATE TABLE`, by name, without the database's name, a column a line.
    static func dump(_ client: ClickHouseClient) async throws -> String {
        let names = try await client.rows(
            "SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name"
        ).compactMap { $0["name"]?.stringValue }
        var statements: [String] = []
        for name in names {
            let rows = try await client.rows("SHOW CREATE TABLE \(identifier: name)")
            let text = try #require(rows.first?["statement"]?.stringValue)
            let plain = text.replacingOccurrences(
                of: "CREATE TABLE \(client.url.database).", with: "CREATE TABLE ")
            statements.append(Self.columnALine(plain))
        }
        return statements.map { $0 + ";\n" }.joined(separator: "\n")
    }

    /// `CREATE TABLE name (a T, b U) ENGINE …` as `CREATE TABLE name (`, a line per column, then
    /// `) ENGINE …`: the columns' list split at its commas outside parentheses and quotes.
    static func columnALine(_ statement: String) -> String {
        guard let open = statement.firstIndex(of: "(") else { return statement }
        var depth = 0
        var quoted = false
        var escaped = false
        var columns: [String] = []
        var column = ""
        var index = statement.index(after: open)
        while index < statement.endIndex {
            let character = statement[index]
            if quoted {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "'" {
                    quoted = false
                }
            } else if character == "'" {
                quoted = true
            } else if character == "(" {
                depth += 1
            } else if character == ")" {
                if depth == 0 { break }
                depth -= 1
            } else if character == "," && depth == 0 {
                columns.append(column.trimmingCharacters(in: .whitespaces))
                column = ""
                index = statement.index(after: index)
                continue
            }
            column.append(character)
            index = statement.index(after: index)
        }
        columns.append(column.trimmingCharacters(in: .whitespaces))
        let head = statement[..<open].trimmingCharacters(in: .whitespaces)
        let tail = index < statement.endIndex ? String(statement[index...]) : ""
        return "\(head) (\n" + columns.map { "    \($0)" }.joined(separator: ",\n") + "\n\(tail)"
    }

    /// A dump's tables by name: each one's columns' lines and the line after them (`) ENGINE …`).
    static func tables(_ dump: String) -> [String: (columns: [String], engine: String)] {
        var tables: [String: (columns: [String], engine: String)] = [:]
        for statement in dump.components(separatedBy: "\n\n") {
            let lines = statement.split(separator: "\n").map(String.init)
            guard let first = lines.first, first.hasPrefix("CREATE TABLE "), lines.count >= 2 else { continue }
            let name = String(first.dropFirst("CREATE TABLE ".count).prefix { $0 != " " })
            let columns = lines.dropFirst().dropLast().map {
                ($0.hasSuffix(",") ? String($0.dropLast()) : $0).trimmingCharacters(in: .whitespaces)
            }
            tables[name] = (columns, lines[lines.count - 1])
        }
        return tables
    }
}
