import Foundation
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Databases as collectors of older schemas left them, for the tests of the migrations after
/// them: a fresh database migrated up to a version (``SchemaMigrations/migrate(_:logger:upTo:)``),
/// what a collector of that version wrote, then the rest of the migrations, as a collector that
/// opens it runs them.
enum OlderSchemas {
    /// The columns of `events` that schema 1 made, which every collector since writes: rows
    /// inserted with only these are rows as a collector of schema 1 to 9 stored them.
    static let eventColumns =
        "source, message_id, type, event, user_id, anonymous_id, session_id, timestamp, original_timestamp, sent_at, received_at, payload"

    /// Runs `body` with a backend on a fresh database of `kind` migrated up to `version`, closed
    /// afterwards, and then `opened` with the database opened as a collector opens it (closed
    /// afterwards too).
    static func upgrade(
        _ kind: StorageKind, from version: Int, tuning: SQLiteTuning = .production,
        writing body: (any SQLBackend) async throws -> Void, opened: (SQLCollectorStorage) async throws -> Void
    ) async throws {
        try await TestDatabase.with(kind) { database in
            let backend = try await database.backend()
            do {
                try await SchemaMigrations.migrate(backend, upTo: version)
                try await body(backend)
                try await backend.close()
            } catch {
                try? await backend.close()
                throw error
            }
            let storage = try await database.storage(tuning: tuning)
            do {
                try await opened(storage)
                try await storage.close()
            } catch {
                try? await storage.close()
                throw error
            }
        }
    }

    /// Stores `messages` of `source` as collectors of schema 4 to 9 stored them: a row of `events`
    /// each, with the columns schema 1 made, the payload whole and the ids as text; and a row of
    /// `sessions` per session, rolled up from its events (its user id the last one sent, its
    /// anonymous id the first), in the order the sessions began.
    static func store(_ messages: [IngestMessage], source: String, in backend: any SQLBackend) async throws {
        struct Session {
            var userId: String?
            var anonymousId: String?
            var first: Int64
            var last: Int64
            var count: Int64
        }
        var sessions: [String: Session] = [:]
        var began: [String] = []
        for message in messages {
            var insert = SQLStatement(backend.dialect, "INSERT INTO events (\(eventColumns)) VALUES ")
            insert.bindTuple([
                .text(source), .text(message.messageId), .text(message.type.rawValue), .optional(message.name),
                .optional(message.userId), .optional(message.anonymousId), .optional(message.sessionId),
                .int(message.timestamp), .optional(message.originalTimestamp), .optional(message.sentAt),
                .int(message.receivedAt), .text(message.payload),
            ])
            _ = try await backend.writeStatement(insert.sql, insert.binds)
            guard let id = message.sessionId else { continue }
            if var session = sessions[id] {
                session.userId = message.userId ?? session.userId
                session.anonymousId = session.anonymousId ?? message.anonymousId
                session.first = min(session.first, message.timestamp)
                session.last = max(session.last, message.timestamp)
                session.count += 1
                sessions[id] = session
            } else {
                began.append(id)
                sessions[id] = Session(
                    userId: message.userId, anonymousId: message.anonymousId, first: message.timestamp,
                    last: message.timestamp, count: 1)
            }
        }
        for id in began {
            guard let session = sessions[id] else { continue }
            var insert = SQLStatement(
                backend.dialect,
                "INSERT INTO sessions (source, session_id, user_id, anonymous_id, first_timestamp, last_timestamp, event_count) VALUES "
            )
            insert.bindTuple([
                .text(source), .text(id), .optional(session.userId), .optional(session.anonymousId),
                .int(session.first), .int(session.last), .int(session.count),
            ])
            _ = try await backend.writeStatement(insert.sql, insert.binds)
        }
    }
}

extension SchemaMigrations {
    /// The versions from `first` on, in order: what migrating a database at the version before
    /// `first` applies.
    static func versions(from first: Int) -> [Int] { all.map(\.version).filter { $0 >= first } }
}
