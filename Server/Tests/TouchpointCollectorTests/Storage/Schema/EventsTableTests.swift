import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// The declaration of `events` (``EventColumn``) against the tables the migrations make, and what
/// is made from it: the writers' inserts and the reading of a row.
struct EventsTableTests {
    /// Each column, in order, with its type and whether it may be NULL, as each database's
    /// catalog describes its migrated table.
    @Test(arguments: StorageKind.available)
    func theDeclarationIsTheMigratedTable(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let declared = EventColumn.allCases.compactMap { column in
                column.type(in: storage.dialect).map { "\(column.name) \($0)\(column.isNullable ? "" : " NOT NULL")" }
            }
            let described: [String]
            switch storage.dialect {
            case .sqlite:
                // (name, type, not null, primary key): an INTEGER PRIMARY KEY is the rowid, never NULL.
                described = try await storage.backend.query(
                    "SELECT name, type, \"notnull\" OR pk FROM pragma_table_info('events') ORDER BY cid", []
                ).map { "\($0[0].text ?? "") \($0[1].text ?? "")\($0[2].int == 1 ? " NOT NULL" : "")" }
            case .postgres:
                described = try await storage.backend.query(
                    """
                    SELECT column_name, data_type, is_nullable FROM information_schema.columns
                    WHERE table_schema = current_schema() AND table_name = 'events' ORDER BY ordinal_position
                    """, []
                ).map { "\($0[0].text ?? "") \($0[1].text ?? "")\($0[2].text == "NO" ? " NOT NULL" : "")" }
            }
            #expect(described == declared)
        }
    }

    /// SQLite's insert names every column but `seq` and numbers its parameters in that order;
    /// PostgreSQL's leaves `context_id` too, and binds every one it inserts but `person_key`.
    @Test func theInsertsAreMadeFromTheDeclaration() {
        let sqlite = SQLiteEventWriter.insertEvent
        #expect(
            sqlite.sql
                == "INSERT INTO events (source, message_id, type, event, user_id, anonymous_id, session_id, timestamp, original_timestamp, sent_at, received_at, payload, session_key, lifted, person_key, context_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
        )
        #expect(sqlite.parameters[.source] == 1 && sqlite.parameters[.sessionKey] == 13)
        #expect(sqlite.parameters[.contextId] == 16 && sqlite.parameters[.seq] == 0)
        let postgres = PostgresEventWriter.Insert.self
        #expect(postgres.columns.map(\.name).last == "person_key" && !postgres.columns.contains(.contextId))
        #expect(postgres.bound == postgres.columns.filter { $0 != .personKey })
        #expect(
            postgres.sql.contains("FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) WITH ORDINALITY")
        )
        #expect(postgres.sql.contains("unnest($14, $15, $16, $17) AS links"))
        #expect(postgres.sql.contains("unnest($18::text[], $19::text[]) AS t(s, p)"))
        #expect(postgres.selected(.sentAt) == "NULLIF(batch.sent_at, '')::bigint")
        #expect(postgres.selected(.event) == "NULLIF(batch.event, '')")
        #expect(postgres.selected(.timestamp) == "batch.timestamp")
    }

    /// PostgreSQL binds each column as its declaration says: integers as integers where NULL is
    /// not allowed, anything else as text with empty text for NULL.
    @Test func postgresBindsEachColumnAsDeclared() throws {
        let rows = [
            PostgresEventWriter.Row(source: "default", message: TestMessages.ingest("e", user: "u1")),
            PostgresEventWriter.Row(source: "default", message: TestMessages.ingest("f", session: nil, anonymous: nil)),
        ]
        let arrays = PostgresEventWriter.Insert.eventColumns(rows)
        #expect(arrays.count == PostgresEventWriter.Insert.bound.count)
        for (column, array) in zip(PostgresEventWriter.Insert.bound, arrays) {
            switch array {
            case .intArray(let values):
                #expect(column.value == .integer && !column.isNullable, "\(column.name)")
                #expect(values.count == 2)
            case .textArray(let values):
                #expect(column.value != .integer || column.isNullable, "\(column.name)")
                #expect(values.count == 2)
                if !column.isNullable { #expect(!values.contains(""), "\(column.name)") }
            default:
                Issue.record("\(column.name) is bound as \(array)")
            }
        }
        let user = try #require(PostgresEventWriter.Insert.bound.firstIndex(of: .userId))
        #expect(arrays[user] == .textArray(["u1", ""]))
    }

    /// A row read back is checked against the declaration: a NULL where its column allows none, a
    /// value of another kind, or another number of columns is a corrupt row, named.
    @Test func readingARowChecksItAgainstTheDeclaration() throws {
        let row: SQLRow = [
            .int(7), .text("m1"), .text("track"), .text("e"), .null, .text("a1"), .null, .int(1_000), .null, .null,
            .int(2_000), .text(#"{"properties":{}}"#), .int(0), .null,
        ]
        let read = try StoredEventRow(row)
        #expect(read.seq == 7 && read.messageId == "m1" && read.name == "e" && read.userId == nil)
        #expect(read.timestamp == 1_000 && read.receivedAt == 2_000 && read.sentAt == nil)
        func rejection(_ row: SQLRow) -> String? {
            do {
                _ = try StoredEventRow(row)
                return nil
            } catch let error as StorageError {
                return error.code == .corruptRow ? error.message : "\(error)"
            } catch {
                return "\(error)"
            }
        }
        var withoutTime = row
        withoutTime[EventsTable.readPositions[EventColumn.timestamp.rawValue]] = .null
        #expect(rejection(withoutTime)?.contains("NULL in timestamp") == true)
        var textSeq = row
        textSeq[0] = .text("seven")
        #expect(rejection(textSeq)?.contains("in seq") == true)
        #expect(rejection(Array(row.dropLast()))?.contains("13 columns") == true)
    }
}
