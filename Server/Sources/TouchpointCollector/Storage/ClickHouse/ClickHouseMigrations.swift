import Foundation
import Logging
import TouchpointCore

/// ClickHouse's versioned schema, as ``SchemaMigrations`` is the SQL stores': each migration runs
/// once, in order, recorded in the database's `schema_migrations`.
///
/// A migration is never edited once released; a change to the schema is a new migration at the
/// end of the list, its statements written out as text (never built from a constant that may
/// change since). A test compares a freshly migrated database with a committed dump
/// (`Dumps/clickhouse.sql`, beside the SQL stores').
///
/// ClickHouse has neither transactions nor locks, and 18.16 no `ADD COLUMN IF NOT EXISTS`; so
/// each migration says what it makes (``Migration/makes``: tables, and columns of `events`), and
/// one not yet recorded whose tables and columns are all present is recorded without running.
/// That is how a database made by the releases before versions (whose `events` has some of the
/// columns) gets the versions it already has, how a collector that stopped between a migration
/// and its record goes on, and how collectors starting together let one another's `ALTER` pass:
/// a statement that fails is forgiven when what its migration makes is present afterwards. For
/// the same reasons a migration's tables are made with `IF NOT EXISTS`, and its one `ALTER`, whose
/// commands ClickHouse applies together, comes last. After its statements what it makes must be
/// present, or the migration fails (an `events` of another shape is not taken for this one).
///
/// Version 1's `events` declares `person` as an alias: the first releases stored it, and stored
/// the properties as JSON (`properties`) too. Such a table is left with both, which ingest goes on
/// filling (``ClickHouseEvents/LegacyColumn``). Columns added by a migration come after the
/// others (18.16 cannot add a column `AFTER` another), so a table made before versions, which had
/// them added by the releases before, may hold its columns in another order than the dump.
enum ClickHouseMigrations {
    struct Migration: Sendable {
        let version: Int
        let summary: String
        /// The tables it creates or alters, each with the columns it adds (all of a table it
        /// creates); none for a migration of data or settings, which runs whenever it is not
        /// recorded and so must be safe to run twice.
        let makes: [(table: String, columns: [String])]
        let statements: [ClickHouseSQL]
    }

    static let all: [Migration] = [
        Migration(
            version: 1, summary: "events",
            makes: [
                (
                    "events",
                    [
                        "source", "event", "type", "message_id", "time", "time_ms", "user_id", "anonymous_id",
                        "person", "session_id", "received_at", "payload", "version",
                    ]
                )
            ],
            statements: [
                """
                CREATE TABLE IF NOT EXISTS events (
                    source String,
                    event String,
                    type String,
                    message_id String,
                    time DateTime,
                    time_ms UInt16,
                    user_id String,
                    anonymous_id String,
                    person String ALIAS if(user_id != '', user_id, anonymous_id),
                    session_id String,
                    received_at DateTime,
                    payload String,
                    version UInt64
                ) ENGINE = ReplacingMergeTree(version)
                PARTITION BY toYYYYMM(time)
                ORDER BY (source, event, toDate(time), message_id)
                """
            ]),
        Migration(
            version: 2, summary: "the properties as arrays for the insights, and each source's retention cut",
            makes: [
                ("retention_cuts", ["source", "before"]),
                ("events", ["property_keys", "property_texts", "property_numbers", "property_numeric"]),
            ],
            statements: [
                """
                CREATE TABLE IF NOT EXISTS retention_cuts (source String, before Int64)
                ENGINE = ReplacingMergeTree(before) ORDER BY source
                """,
                """
                ALTER TABLE events
                    ADD COLUMN property_keys Array(String),
                    ADD COLUMN property_texts Array(String),
                    ADD COLUMN property_numbers Array(Float64),
                    ADD COLUMN property_numeric Array(UInt8)
                """,
            ]),
        Migration(
            version: 3, summary: "the ids of resent messages",
            makes: [("resent_messages", ["source", "message_id", "time", "time_ms"])],
            statements: [
                // `ClickHouseEvents.markEarlierCopies` makes the same table, filled, beside an
                // `events` of the releases before it.
                """
                CREATE TABLE IF NOT EXISTS resent_messages (source String, message_id String, time DateTime, time_ms UInt16)
                ENGINE = MergeTree PARTITION BY toYYYYMM(time) ORDER BY (source, message_id)
                """
            ]),
        Migration(
            version: 4, summary: "the person as a number",
            makes: [("events", ["person_hash", "anonymous"])],
            statements: [
                """
                ALTER TABLE events
                    ADD COLUMN person_hash UInt64 MATERIALIZED
                        if(user_id != '', cityHash64(user_id), if(anonymous_id != '', cityHash64(anonymous_id), 0)),
                    ADD COLUMN anonymous UInt8 MATERIALIZED user_id = ''
                """
            ]),
    ]

    /// The newest schema version this build knows.
    static var latestVersion: Int { all.last?.version ?? 0 }

    /// The table of the versions applied, one row per version (two when collectors that started
    /// together both recorded it).
    static let versionsStatement: ClickHouseSQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, applied_at DateTime)
        ENGINE = MergeTree ORDER BY version
        """

    /// Brings the schema up to date, or up to version `last`, saying to the client's logger each
    /// migration it applies to a database that held events before.
    /// - Parameter last: the newest version to apply (a collector: ``latestVersion``; a test: the
    ///   version before the one it tests).
    /// - Returns: the versions recorded now, run or found made.
    /// - Throws: ``StorageError`` `migration` when the database is newer than this build or a
    ///   migration left what it makes missing; `database` when a statement failed.
    @discardableResult
    static func migrate(_ client: ClickHouseClient, upTo last: Int = latestVersion) async throws -> [Int] {
        try await client.execute(versionsStatement)
        let applied = Set(
            try await client.rows("SELECT DISTINCT version FROM schema_migrations").compactMap {
                $0["version"]?.intValue
            }
        )
        if let newest = applied.max(), newest > latestVersion {
            throw StorageError(
                code: .migration,
                message:
                    "ClickHouse at \(client.url) has schema version \(newest); this collector knows up to \(latestVersion)"
            )
        }
        var schema = try await Schema.read(client)
        let upgrading = schema.columns["events"] != nil
        var recorded: [Int] = []
        for migration in all where migration.version <= last && !applied.contains(migration.version) {
            if !schema.has(migration) {
                if upgrading {
                    client.logger.info(
                        "applying ClickHouse schema migration \(migration.version): \(migration.summary)",
                        metadata: ["database": "\(client.url.database)"])
                }
                do {
                    for statement in migration.statements { try await client.execute(statement) }
                } catch {
                    // Another collector starting at the same time may have applied it first.
                    schema = try await Schema.read(client)
                    guard schema.has(migration) else { throw error }
                }
                schema = try await Schema.read(client)
                guard schema.has(migration) else {
                    throw StorageError(
                        code: .migration,
                        message:
                            "ClickHouse at \(client.url): schema migration \(migration.version) (\(migration.summary)) "
                            + "ran, and \(schema.missing(migration).joined(separator: ", ")) is still missing")
                }
            }
            try await client.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (\(migration.version), now())")
            recorded.append(migration.version)
        }
        return recorded
    }

    /// The tables of the client's database and their columns.
    struct Schema {
        /// Each table's columns, by name; each column's kind (`''` when stored as written, else
        /// `DEFAULT`, `MATERIALIZED` or `ALIAS`).
        var columns: [String: [String: String]] = [:]

        static func read(_ client: ClickHouseClient) async throws -> Schema {
            var schema = Schema()
            for row in try await client.rows("SELECT name FROM system.tables WHERE database = currentDatabase()") {
                if let table = row["name"]?.stringValue { schema.columns[table] = [:] }
            }
            let rows = try await client.rows(
                "SELECT table, name, default_kind AS kind FROM system.columns WHERE database = currentDatabase()")
            for row in rows {
                guard let table = row["table"]?.stringValue, let name = row["name"]?.stringValue else { continue }
                schema.columns[table, default: [:]][name] = row["kind"]?.stringValue ?? ""
            }
            return schema
        }

        /// What `migration` makes that is not here, as `table` or `table.column`.
        func missing(_ migration: Migration) -> [String] {
            migration.makes.flatMap { table, names -> [String] in
                guard let present = columns[table] else { return [table] }
                return names.filter { present[$0] == nil }.map { "\(table).\($0)" }
            }
        }

        /// Whether what `migration` makes is here (never for one that makes nothing).
        func has(_ migration: Migration) -> Bool { !migration.makes.isEmpty && missing(migration).isEmpty }
    }
}
