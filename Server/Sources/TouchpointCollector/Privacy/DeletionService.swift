import Foundation
import TouchpointCore

/// Deleting a user's data on request, and refusing their events afterwards when asked.
///
/// A request names user ids and/or anonymous ids of one source. The anonymous ids the user ids
/// were seen with are followed (the same person before signing in). Every event and session of
/// those ids and every per-user scenario document of the user ids is deleted in one transaction,
/// and the request is recorded with what it deleted. With `suppress`, later events of those ids
/// are refused at ingest (listed as rejected, counted) until the suppression is lifted.
///
/// The ids themselves are kept nowhere: the record and the suppression list hold their keyed
/// hashes (``SuppressionKey``), and ingest hashes an event's ids to look them up. On SQLite the
/// deletion overwrites what it deleted and empties the write-ahead log, so no copy of an id stays
/// in the database's files either.
public final class DeletionService: Sendable {
    /// The most ids one request may name.
    public static let maximumIDs = 100

    let storage: any StorageOperations & PeopleStore
    private let clock: any WallClock
    let key: SuppressionKey
    /// The suppressed ids' hashes.
    private let suppressed = Locked(Set<SuppressedID>())
    private let refusedCount = Locked(0)

    init(storage: any StorageOperations & PeopleStore, clock: any WallClock, key: SuppressionKey) {
        self.storage = storage
        self.clock = clock
        self.key = key
    }

    /// Loads the suppressed ids (at start, and now and then for what other collectors suppressed),
    /// first hashing what a collector before schema 20 kept in plain text.
    func load() async throws {
        try await storage.hashPlainDeletions(key)
        let ids = try await storage.suppressedIDs()
        let changed = suppressed.withLock { suppressed in
            let new = Set(ids)
            defer { suppressed = new }
            return new != suppressed
        }
        // Another collector's deletion may have taken people out of the daily people.
        if changed { storage.forgetDailyPeople() }
    }

    /// Events refused because their ids are suppressed, since start.
    public var refusedEvents: Int { refusedCount.value }

    /// Whether an event of `source` with these ids is refused.
    func isSuppressed(source: String, userId: String?, anonymousId: String?) -> Bool {
        guard !suppressed.withLock({ $0.isEmpty }) else { return false }
        var asked: [SuppressedID] = []
        if let userId { asked.append(key.hashed(SuppressedID(source: source, kind: .user, id: userId))) }
        if let anonymousId { asked.append(key.hashed(SuppressedID(source: source, kind: .anonymous, id: anonymousId))) }
        return suppressed.withLock { set in asked.contains { set.contains($0) } }
    }

    func countRefused(_ count: Int) { refusedCount.withLock { $0 += count } }

    /// Deletes the data of the ids now and records the request.
    /// - Returns: the request as the API shows it.
    /// - Throws: ``CollectorError`` `invalid_request` naming what is wrong with the ids.
    public func delete(source: String, userIds: [String], anonymousIds: [String], suppress: Bool) async throws
        -> JSONValue
    {
        let userIds = Array(Set(userIds)).sorted()
        let given = Array(Set(anonymousIds)).sorted()
        guard !userIds.isEmpty || !given.isEmpty else {
            throw CollectorError(.invalidRequest, "userIds, anonymousIds: name at least one id", path: "userIds")
        }
        guard userIds.count + given.count <= Self.maximumIDs else {
            throw CollectorError(
                .invalidRequest, "userIds, anonymousIds: at most \(Self.maximumIDs) ids per request", path: "userIds")
        }
        for (field, ids) in [("userIds", userIds), ("anonymousIds", given)] {
            if let bad = ids.firstIndex(where: { $0.isEmpty || $0.unicodeScalars.contains("\u{0}") }) {
                throw CollectorError(.invalidRequest, "\(field)[\(bad)]: an empty id or one with U+0000", path: field)
            }
        }
        let followed = try await storage.anonymousIDs(source: source, ofUsers: userIds).filter { !given.contains($0) }
        let anonymous = (given + followed).sorted()
        let id = "del_" + CollectorCredentials.randomHex(bytes: 12)
        let now = Timestamp.milliseconds(clock.now())
        let toSuppress: [SuppressedID] =
            suppress
            ? userIds.map { key.hashed(SuppressedID(source: source, kind: .user, id: $0)) }
                + anonymous.map { key.hashed(SuppressedID(source: source, kind: .anonymous, id: $0)) } : []
        func hashes(_ ids: [String], _ kind: SuppressedID.Kind) -> JSONValue {
            .array(ids.map { key.hash(source: source, kind: kind, id: $0) }.sorted().map { .string($0) })
        }
        var body: [String: JSONValue] = [
            "id": .string(id), "source": .string(source), "userIds": hashes(userIds, .user),
            "anonymousIds": hashes(given, .anonymous), "followedAnonymousIds": hashes(followed, .anonymous),
            "suppress": .bool(suppress), "requestedAt": .string(Timestamp.format(Timestamp.date(milliseconds: now))),
            "state": .string("deleting"), "idsHashed": true,
        ]
        let record = StoredDeletion(
            id: id, source: source, body: JSONValue.object(body).jsonString(sortedKeys: true), suppressing: suppress,
            requestedAt: now)
        let deleted = try await storage.deleteUserData(
            record, userIds: userIds, anonymousIds: anonymous, suppress: toSuppress)
        body["state"] = .string(suppress ? "deleted, suppressing" : "deleted")
        body["deleted"] = .object([
            "events": .int(deleted.events), "sessions": .int(deleted.sessions), "documents": .int(deleted.documents),
        ])
        let final = JSONValue.object(body)
        try await storage.updateDeletion(id: id, body: final.jsonString(sortedKeys: true))
        suppressed.withLock { $0.formUnion(toSuppress) }
        return final
    }

    /// A deletion record written before schema 20, with the ids it named in plain text, as it is
    /// kept now: each id replaced by its hash.
    static func redacted(_ body: String, key: SuppressionKey) -> String {
        guard var members = (try? JSONParser.parse(Array(body.utf8)))?.objectValue,
            let source = members["source"]?.stringValue
        else { return body }
        guard members["idsHashed"] == nil else { return body }
        for (name, kind) in [
            ("userIds", SuppressedID.Kind.user), ("anonymousIds", .anonymous), ("followedAnonymousIds", .anonymous),
        ] {
            let ids = members[name]?.arrayValue?.compactMap(\.stringValue) ?? []
            members[name] = .array(
                ids.map { key.hash(source: source, kind: kind, id: $0) }.sorted().map { .string($0) })
        }
        members["idsHashed"] = true
        return JSONValue.object(members).jsonString(sortedKeys: true)
    }

    /// Ends the suppression of request `id`; its ids' events are stored again.
    /// - Throws: ``CollectorError`` `not_found` for an unknown request.
    public func lift(source: String, id: String) async throws -> JSONValue {
        guard try await !storage.deletions(source: source, id: id).isEmpty,
            try await storage.liftSuppression(requestId: id, at: Timestamp.milliseconds(clock.now()))
        else {
            throw CollectorError(.notFound, "no deletion request \(id) for this source", path: "id")
        }
        try await load()
        return try await request(source: source, id: id)
    }

    /// The source's requests, newest first.
    public func list(source: String) async throws -> [JSONValue] {
        try await storage.deletions(source: source, id: nil).map(Self.json)
    }

    /// One request.
    /// - Throws: ``CollectorError`` `not_found` for an unknown request.
    public func request(source: String, id: String) async throws -> JSONValue {
        guard let stored = try await storage.deletions(source: source, id: id).first else {
            throw CollectorError(.notFound, "no deletion request \(id) for this source", path: "id")
        }
        return Self.json(stored)
    }

    private static func json(_ stored: StoredDeletion) -> JSONValue {
        var body = (try? JSONParser.parse(Array(stored.body.utf8)))?.objectValue ?? [:]
        if let lifted = stored.liftedAt {
            body["state"] = .string("deleted, suppression lifted")
            body["liftedAt"] = .string(Timestamp.format(Timestamp.date(milliseconds: lifted)))
        }
        return .object(body)
    }
}
