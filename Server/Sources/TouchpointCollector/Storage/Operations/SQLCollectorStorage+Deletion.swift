import Foundation
import TouchpointCore

/// Counts of what a deletion removed.
struct DeletedData: Sendable, Hashable {
    var events = 0
    var sessions = 0
    var documents = 0
}

/// An id that is refused at ingest: a user id or an anonymous id of one source (stored as its
/// keyed hash, ``SuppressionKey``).
struct SuppressedID: Sendable, Hashable {
    enum Kind: String, Sendable, Hashable {
        case user
        case anonymous
    }

    var source: String
    var kind: Kind
    var id: String
}

/// A stored deletion request.
struct StoredDeletion: Sendable, Hashable {
    var id: String
    var source: String
    /// The request's JSON: the ids, what was followed, what was deleted.
    var body: String
    var suppressing: Bool
    var requestedAt: Int64
    var liftedAt: Int64?
}

extension SQLCollectorStorage {
    // MARK: Deleting a user's data

    /// The anonymous ids the given user ids were seen with (their devices before sign-in).
    func anonymousIDs(source: String, ofUsers userIds: [String]) async throws -> [String] {
        guard !userIds.isEmpty else { return [] }
        var found = Set<String>()
        for table in ["sessions", "events", "identities"] {
            var statement = SQLStatement(dialect, "SELECT DISTINCT anonymous_id FROM \(table) WHERE source = ")
            statement.bind(.text(source))
            statement.append(" AND anonymous_id IS NOT NULL AND user_id IN ")
            statement.bindTuple(userIds.map { .text($0) })
            for row in try await backend.query(statement) {
                if let id = row.first?.text { found.insert(id) }
            }
        }
        return found.sorted()
    }

    /// Deletes every event and session of the ids, and the user ids' scenario documents, in one
    /// transaction; records the request and, when `suppress`, the ids refused from now on.
    func deleteUserData(
        _ deletion: StoredDeletion, userIds: [String], anonymousIds: [String], suppress: [SuppressedID]
    ) async throws -> DeletedData {
        let source = deletion.source
        var statements: [(SQLStatement, table: String)] = []
        // A profile is a user's; an identity link names both ids (either one deleted takes it),
        // and an alias makes a user id the link's "anonymous" side (its `previousId`).
        let everyId = Array(Set(userIds + anonymousIds)).sorted().map { SQLValue.text($0) }
        for table in ["events", "sessions", "identities", "profiles"] {
            if table == "profiles" && userIds.isEmpty { continue }
            var statement = SQLStatement(dialect, "DELETE FROM \(table) WHERE source = ")
            statement.bind(.text(source))
            statement.append(" AND (")
            var clauses = 0
            if !userIds.isEmpty {
                statement.append("user_id IN ")
                statement.bindTuple(userIds.map { .text($0) })
                clauses += 1
            }
            let anonymous = table == "identities" ? everyId : anonymousIds.map { SQLValue.text($0) }
            if !anonymous.isEmpty && table != "profiles" {
                if clauses > 0 { statement.append(" OR ") }
                statement.append("anonymous_id IN ")
                statement.bindTuple(anonymous)
            }
            if table == "events" {
                // The alias calls that named a deleted id as their `previousId`, found through the
                // links they made (by their users), so the id is left in no payload.
                statement.append(" OR (type = 'alias' AND user_id IN (SELECT user_id FROM identities WHERE source = ")
                statement.bind(.text(source))
                statement.append(" AND anonymous_id IN ")
                statement.bindTuple(everyId)
                statement.append(") AND \(dialect.aliasPreviousId) IN ")
                statement.bindTuple(everyId)
                statement.append(")")
            }
            // An event's row returns its shared context (`SharedContexts`), released below, what
            // its daily people's bit is (`DailyPeopleRollup`), cleared below, and what its
            // definitions take off (`DefinitionCounts`).
            statement.append(
                table == "events"
                    ? ") RETURNING context_id, event, timestamp, person_key, \(Self.definedColumns)"
                    : ") RETURNING source")
            statements.append((statement, table))
        }
        // The ids' numbers (`PersonKeys`) and their merges (first, found through the numbers).
        let people = Array(Set(userIds + anonymousIds)).sorted().map { SQLValue.text($0) }
        if !people.isEmpty {
            var merges = SQLStatement(dialect, "DELETE FROM person_merges WHERE ")
            for (offset, column) in [("anonymous_key", "-person_key"), ("user_key", "person_key")].enumerated() {
                merges.append(offset == 0 ? "" : " OR ")
                merges.append("\(column.0) IN (SELECT \(column.1) FROM person_keys WHERE source = ")
                merges.bind(.text(source))
                merges.append(" AND person IN ")
                merges.bindTuple(people)
                merges.append(")")
            }
            statements.append((merges, "person_merges"))
            var keys = SQLStatement(dialect, "DELETE FROM person_keys WHERE source = ")
            keys.bind(.text(source))
            keys.append(" AND person IN ")
            keys.bindTuple(people)
            statements.append((keys, "person_keys"))
        }
        var documents: [(count: SQLStatement, delete: SQLStatement)] = []
        for userId in userIds {
            let prefix = ScenarioService.userNamespacePrefix(userId)
            let match =
                "source = \(dialect.placeholder(1)) AND substr(namespace, 1, \(prefix.unicodeScalars.count)) = \(dialect.placeholder(2))"
            var count = SQLStatement(dialect, "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM scenarios WHERE ")
            count.append(match)
            var delete = SQLStatement(dialect, "DELETE FROM scenarios WHERE ")
            delete.append(match)
            documents.append((count, delete))
        }
        let binds: [[SQLValue]] = userIds.map { [.text(source), .text(ScenarioService.userNamespacePrefix($0))] }
        var record = SQLStatement(
            dialect, "INSERT INTO deletion_requests (id, source, body, suppressing, requested_at, redacted) VALUES ")
        record.bindTuple([
            .text(deletion.id), .text(source), .text(deletion.body), .int(deletion.suppressing ? 1 : 0),
            .int(deletion.requestedAt), .int(1),
        ])
        var suppressions: [SQLStatement] = []
        for id in suppress {
            var statement = SQLStatement(
                dialect, "INSERT INTO suppressions (source, kind, id, request_id, hashed) VALUES ")
            statement.bindTuple([
                .text(id.source), .text(id.kind.rawValue), .text(id.id), .text(deletion.id), .int(1),
            ])
            statement.append(" ON CONFLICT (source, kind, id) DO UPDATE SET request_id = excluded.request_id")
            suppressions.append(statement)
        }
        let dialect = self.dialect
        let plan = (
            statements: statements, documents: documents, binds: binds, record: record, suppressions: suppressions
        )
        let writer = self.writer
        let calendar = calendars.calendar(of: source)
        let rollups = calendars.rollups
        let deleted = try await backend.write { transaction in
            var deleted = DeletedData()
            // What is deleted is overwritten, not only unlinked (SQLite).
            for statement in dialect.secureDelete(true) { _ = try await transaction.query(statement, []) }
            // Numbers of deleted people may be given again: the writer forgets every one it
            // remembers (inside this transaction, so no write in between keeps one).
            if !people.isEmpty { writer.forgetPeople() }
            writer.forgetDailyPeople()
            for (statement, table) in plan.statements {
                let rows = try await transaction.query(statement)
                if table == "events" {
                    deleted.events += rows.count
                    try await Self.releaseContexts(rows.map { $0.first?.int }, in: transaction, dialect: dialect)
                    let properties = rollups.properties(of: source)
                    let counted = rows.compactMap { row -> DeletedEvent? in
                        guard let event = row[1].text, let timestamp = row[2].int, let key = row[3].int else {
                            return nil
                        }
                        var deleted = DeletedEvent(event: event, timestamp: timestamp, personKey: key)
                        // The definitions' columns from 4: seq, source, type, event, lifted, payload.
                        if !properties.isEmpty, let lifted = row[8].int, let payload = row[9].text {
                            let values = ValueRollup.values(of: properties, payload: payload, lifted: lifted)
                            deleted.values = Array(zip(properties, values))
                        }
                        return deleted
                    }
                    try await Self.clearDailyPeople(
                        source: source, events: counted, calendar: calendar, in: transaction, dialect: dialect)
                    try await Self.forgetDefinitions(
                        of: rows, at: 4, rollups: rollups, in: transaction, dialect: dialect)
                } else if table == "sessions" {
                    deleted.sessions += rows.count
                }
            }
            if deleted.events > 0 || deleted.sessions > 0 {
                _ = try await transaction.query(
                    SourceCounts.change(dialect, source: source, events: -deleted.events, sessions: -deleted.sessions))
            }
            for (index, document) in plan.documents.enumerated() {
                let row = try await transaction.query(document.count.sql, plan.binds[index]).first
                let count = row?[0].int ?? 0
                let bytes = row?[1].int ?? 0
                guard count > 0 else { continue }
                _ = try await transaction.query(document.delete.sql, plan.binds[index])
                var usage = SQLStatement(dialect, "UPDATE scenario_usage SET documents = documents - ")
                usage.bind(.int(count))
                usage.append(", bytes = bytes - ")
                usage.bind(.int(bytes))
                usage.append(" WHERE source = ")
                usage.bind(.text(source))
                _ = try await transaction.query(usage)
                deleted.documents += Int(count)
            }
            _ = try await transaction.query(plan.record)
            for statement in plan.suppressions { _ = try await transaction.query(statement) }
            for statement in dialect.secureDelete(false) { _ = try await transaction.query(statement, []) }
            return deleted
        }
        // And the log that held them as they were written goes (SQLite's write-ahead log).
        try await backend.purgeLog()
        // ClickHouse's copies, after the commit: the ids are suppressed by now, so no event of
        // theirs arrives after the mutation. When it fails, the deletion answers an error and a
        // repeat of it deletes there again (here it finds nothing left).
        try await clickHouse?.delete(source: source, userIds: userIds, anonymousIds: anonymousIds)
        return deleted
    }

    /// Hashes the suppressed ids and the ids in deletion records that a collector before schema
    /// 20 kept in plain text (``SuppressionKey``), overwriting the text; nothing when there are none.
    func checkSuppressionKey(_ key: SuppressionKey) async throws {
        let fingerprint = key.fingerprint
        let dialect = self.dialect
        let matches = try await backend.write { transaction in
            let stored = try await transaction.query("SELECT fingerprint FROM suppression_key", []).compactMap {
                $0.first?.text
            }
            if stored == [fingerprint] { return true }
            // Nothing hashed yet (a new database, or a restored one that never deleted anyone):
            // this key is the database's from now on.
            let hashed =
                try await transaction.query(
                    "SELECT (SELECT COUNT(*) FROM suppressions) + (SELECT COUNT(*) FROM deletion_requests)", []
                ).first?.first?.int ?? 0
            guard hashed == 0 else { return false }
            _ = try await transaction.query("DELETE FROM suppression_key", [])
            var insert = SQLStatement(dialect, "INSERT INTO suppression_key (fingerprint) VALUES ")
            insert.bindTuple([.text(fingerprint)])
            _ = try await transaction.query(insert)
            return true
        }
        guard matches else {
            throw CollectorError(
                .invalidConfiguration,
                "the suppression key (suppressionKey in \(CollectorCredentials.fileName), or TOUCHPOINT_SUPPRESSION_KEY) is not the one this database's deleted ids were hashed with: give every collector of the database the same key, and restore a backup with the \(CollectorCredentials.fileName) of the data directory it came from (to start with a new key and stop recognising the ids deleted so far, delete the row of the table suppression_key)"
            )
        }
    }

    func hashPlainDeletions(_ key: SuppressionKey) async throws {
        let plain =
            try await backend.query(
                "SELECT COUNT(*) FROM suppressions WHERE hashed = 0", []
            ).first?.first?.int ?? 0
        let unredacted =
            try await backend.query(
                "SELECT COUNT(*) FROM deletion_requests WHERE redacted = 0", []
            ).first?.first?.int ?? 0
        guard plain > 0 || unredacted > 0 else { return }
        let dialect = self.dialect
        try await backend.write { transaction in
            for statement in dialect.secureDelete(true) { _ = try await transaction.query(statement, []) }
            let rows = try await transaction.query(
                "SELECT source, kind, id, request_id FROM suppressions WHERE hashed = 0", [])
            for row in rows {
                guard let source = row[0].text, let kindName = row[1].text,
                    let kind = SuppressedID.Kind(rawValue: kindName), let id = row[2].text, let request = row[3].text
                else { continue }
                var delete = SQLStatement(dialect, "DELETE FROM suppressions WHERE hashed = 0 AND source = ")
                delete.bind(.text(source))
                delete.append(" AND kind = ")
                delete.bind(.text(kindName))
                delete.append(" AND id = ")
                delete.bind(.text(id))
                _ = try await transaction.query(delete)
                var insert = SQLStatement(
                    dialect, "INSERT INTO suppressions (source, kind, id, request_id, hashed) VALUES ")
                insert.bindTuple([
                    .text(source), .text(kindName), .text(key.hash(source: source, kind: kind, id: id)),
                    .text(request), .int(1),
                ])
                insert.append(" ON CONFLICT (source, kind, id) DO NOTHING")
                _ = try await transaction.query(insert)
            }
            for row in try await transaction.query("SELECT id, body FROM deletion_requests WHERE redacted = 0", []) {
                guard let id = row[0].text, let body = row[1].text else { continue }
                var update = SQLStatement(dialect, "UPDATE deletion_requests SET redacted = 1, body = ")
                update.bind(.text(DeletionService.redacted(body, key: key)))
                update.append(" WHERE id = ")
                update.bind(.text(id))
                _ = try await transaction.query(update)
            }
            for statement in dialect.secureDelete(false) { _ = try await transaction.query(statement, []) }
        }
        try await backend.purgeLog()
    }

    /// Updates a recorded request's JSON (what was deleted is known only after the deletion).
    func updateDeletion(id: String, body: String) async throws {
        var statement = SQLStatement(dialect, "UPDATE deletion_requests SET body = ")
        statement.bind(.text(body))
        statement.append(" WHERE id = ")
        statement.bind(.text(id))
        _ = try await backend.writeStatement(statement.sql, statement.binds)
    }

    /// Ends the suppression a request set.
    /// - Returns: whether the request exists.
    func liftSuppression(requestId: String, at time: Int64) async throws -> Bool {
        var lift = SQLStatement(dialect, "UPDATE deletion_requests SET lifted_at = ")
        lift.bind(.int(time))
        lift.append(" WHERE id = ")
        lift.bind(.text(requestId))
        lift.append(" RETURNING id")
        var remove = SQLStatement(dialect, "DELETE FROM suppressions WHERE request_id = ")
        remove.bind(.text(requestId))
        let statements = (lift: lift, remove: remove)
        return try await backend.write { transaction in
            guard try await !transaction.query(statements.lift).isEmpty else { return false }
            _ = try await transaction.query(statements.remove)
            return true
        }
    }

    /// Every suppressed id (as its hash), of every source.
    func suppressedIDs() async throws -> [SuppressedID] {
        try await backend.query("SELECT source, kind, id FROM suppressions", []).compactMap { row in
            guard let source = row[0].text, let kind = row[1].text.flatMap(SuppressedID.Kind.init(rawValue:)),
                let id = row[2].text
            else { return nil }
            return SuppressedID(source: source, kind: kind, id: id)
        }
    }

    /// A source's deletion requests, newest first, or one of them.
    func deletions(source: String, id: String? = nil) async throws -> [StoredDeletion] {
        var statement = SQLStatement(
            dialect,
            "SELECT id, source, body, suppressing, requested_at, lifted_at FROM deletion_requests WHERE source = ")
        statement.bind(.text(source))
        if let id {
            statement.append(" AND id = ")
            statement.bind(.text(id))
        }
        statement.append(" ORDER BY requested_at DESC, id DESC LIMIT 1000")
        return try await backend.query(statement).compactMap { row in
            guard let id = row[0].text, let source = row[1].text, let body = row[2].text,
                let suppressing = row[3].int, let requestedAt = row[4].int
            else { return nil }
            return StoredDeletion(
                id: id, source: source, body: body, suppressing: suppressing != 0, requestedAt: requestedAt,
                liftedAt: row[5].int)
        }
    }

    /// Takes deleted events off the `contexts` rows that their contexts name (``SharedContexts``),
    /// and deletes the rows that no event names any more, in the deleting transaction: a context
    /// can hold what identifies a person (an IP address, a device id).
    /// - Parameter ids: the deleted events' `context_id`s (nil for an inline context).
    static func releaseContexts(_ ids: [Int64?], in transaction: any SQLTransaction, dialect: SQLDialect)
        async throws
    {
        var counts: [Int64: Int64] = [:]
        for case let id? in ids { counts[id, default: 0] += 1 }
        var unused: [SQLValue] = []
        for (id, count) in counts.sorted(by: { $0.key < $1.key }) {
            var statement = SQLStatement(dialect, "UPDATE contexts SET events = events - ")
            statement.bind(.int(count))
            statement.append(" WHERE id = ")
            statement.bind(.int(id))
            statement.append(" RETURNING events")
            let left = try await transaction.query(statement).first?.first?.int
            if let left, left <= 0 { unused.append(.int(id)) }
        }
        guard !unused.isEmpty else { return }
        var delete = SQLStatement(dialect, "DELETE FROM contexts WHERE id IN ")
        delete.bindTuple(unused)
        _ = try await transaction.query(delete)
    }
}
