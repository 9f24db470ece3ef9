import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Deleting a user's data on request (both databases), and refusing their events afterwards.
struct DeletionTests {
    /// u1 (seen before sign-in as a1), u2 (as a2), and a3 who never signed in.
    static func seed(_ storage: SQLCollectorStorage) async throws {
        let messages = [
            TestMessages.ingest("browse", id: "e1", session: "s0", user: nil, anonymous: "a1"),
            TestMessages.ingest("sign_in", id: "e2", session: "s1", user: "u1", anonymous: "a1"),
            TestMessages.ingest("buy", id: "e3", session: "s1", user: "u1", anonymous: "a1"),
            TestMessages.ingest("browse", id: "e4", session: "s2", user: "u2", anonymous: "a2"),
            TestMessages.ingest("browse", id: "e5", session: "s3", user: nil, anonymous: "a3"),
            TestMessages.ingest("server_side", id: "e6", session: nil, user: "u1", anonymous: nil),
            // Sign-ins that merge a1 into u1 and a2 into u2 (profiles and identities hold them too).
            AnalyticsTests.call(.identify, id: "i1", user: "u1", anonymous: "a1"),
            AnalyticsTests.call(.identify, id: "i2", user: "u2", anonymous: "a2"),
        ]
        #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
        let scenarios = ScenarioService(storage: storage, clock: ManualClock(), maximumBodyBytes: 10_000)
        for user in ["u1", "u2"] {
            _ = try await scenarios.write(
                source: "default", owner: .user(user), namespace: "prefs", scenarioId: "theme",
                body: Array(#"{"dark":true}"#.utf8), precondition: .absent)
        }
    }

    static func count(_ storage: SQLCollectorStorage, _ sql: String) async throws -> Int64 {
        try await storage.backend.query(sql, []).first?.first?.int ?? -1
    }

    @Test(arguments: StorageKind.available)
    func aDeletionLeavesNoRowOfTheIdsAndSuppressesThem(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            try await Self.seed(storage)
            let key = try #require(SuppressionKey(hex: String(repeating: "ab", count: 32)))
            let service = DeletionService(storage: storage, clock: ManualClock(), key: key)
            let result = try await service.delete(
                source: "default", userIds: ["u1"], anonymousIds: ["a3"], suppress: true)
            // The record names the ids by their keyed hashes, never in plain text.
            #expect(
                result["followedAnonymousIds"] == [.string(key.hash(source: "default", kind: .anonymous, id: "a1"))])
            #expect(result["userIds"] == [.string(key.hash(source: "default", kind: .user, id: "u1"))])
            for table in ["deletion_requests", "suppressions"] {
                let rows = try await storage.backend.query("SELECT * FROM \(table)", [])
                let text = rows.map { "\($0)" }.joined()
                #expect(!rows.isEmpty, "\(table)")
                for id in ["\"u1\"", "\"a1\"", "\"a3\""] { #expect(!text.contains(id), "\(table) holds \(id)") }
            }
            #expect(result["deleted"] == ["events": 6, "sessions": 3, "documents": 1])
            #expect(result["state"] == "deleted, suppressing")

            // Every table that holds data: nothing of u1, a1 or a3 is left; u2 is untouched.
            #expect(
                try await Self.count(
                    storage,
                    "SELECT COUNT(*) FROM events WHERE user_id = 'u1' OR anonymous_id IN ('a1', 'a3') OR payload LIKE '%\"u1\"%' OR payload LIKE '%\"a1\"%' OR payload LIKE '%\"a3\"%'"
                ) == 0)
            #expect(
                try await Self.count(
                    storage, "SELECT COUNT(*) FROM sessions WHERE user_id = 'u1' OR anonymous_id IN ('a1', 'a3')") == 0)
            #expect(try await Self.count(storage, "SELECT COUNT(*) FROM scenarios WHERE namespace LIKE '%u1%'") == 0)
            #expect(try await Self.count(storage, "SELECT COUNT(*) FROM profiles WHERE user_id = 'u1'") == 0)
            #expect(
                try await Self.count(
                    storage, "SELECT COUNT(*) FROM identities WHERE user_id = 'u1' OR anonymous_id IN ('a1', 'a3')")
                    == 0)
            // The analytics' numbers for the ids, and their merges (a1 → u1).
            #expect(
                try await Self.count(storage, "SELECT COUNT(*) FROM person_keys WHERE person IN ('u1', 'a1', 'a3')")
                    == 0)
            #expect(try await Self.count(storage, "SELECT COUNT(*) FROM person_merges") == 1)
            #expect(try await Self.count(storage, "SELECT COUNT(*) FROM person_keys WHERE person IN ('u2', 'a2')") == 2)
            #expect(try await Self.count(storage, "SELECT COUNT(*) FROM profiles WHERE user_id = 'u2'") == 1)
            #expect(try await Self.count(storage, "SELECT COUNT(*) FROM identities WHERE user_id = 'u2'") == 1)
            #expect(try await Self.count(storage, "SELECT COUNT(*) FROM events WHERE user_id = 'u2'") == 2)
            #expect(try await Self.count(storage, "SELECT COUNT(*) FROM scenarios WHERE namespace LIKE '%u2%'") == 1)
            #expect(try await Self.count(storage, "SELECT documents FROM scenario_usage WHERE source = 'default'") == 1)

            #expect(service.isSuppressed(source: "default", userId: "u1", anonymousId: nil))
            #expect(service.isSuppressed(source: "default", userId: nil, anonymousId: "a1"))
            #expect(!service.isSuppressed(source: "default", userId: "u2", anonymousId: "a2"))
            #expect(!service.isSuppressed(source: "web", userId: "u1", anonymousId: nil))

            // A new service (a restart) loads the suppressions; lifting ends them.
            let restarted = DeletionService(storage: storage, clock: ManualClock(), key: key)
            try await restarted.load()
            #expect(restarted.isSuppressed(source: "default", userId: "u1", anonymousId: nil))
            let id = try #require(result["id"]?.stringValue)
            let lifted = try await restarted.lift(source: "default", id: id)
            #expect(lifted["state"] == "deleted, suppression lifted")
            #expect(!restarted.isSuppressed(source: "default", userId: "u1", anonymousId: nil))
            #expect(try await restarted.list(source: "default").count == 1)
        }
    }

    /// After a deletion the ids are in no file of a SQLite store: not in the database (its freed
    /// pages are overwritten), not in its write-ahead log, not in the deletion's own record.
    @Test func aDeletionLeavesTheIdsInNoFileOfTheStore() async throws {
        let directory = try TemporaryDirectory(prefix: "deletion-files")
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending("touchpoint.sqlite").path, logger: Logger(label: "test"))
        let (user, anonymous) = ("user-7f3a9c41", "anon-51be0d77")
        var messages = [
            AnalyticsTests.call(.identify, id: "i1", user: user, anonymous: anonymous),
            // The user later took a new id: the alias keeps the old one as its previousId.
            AnalyticsTests.call(.alias, id: "al1", user: "renamed-user", previous: user),
        ]
        for index in 0..<50 {
            messages.append(
                TestMessages.ingest(
                    "view", id: "v\(index)", session: "s\(index / 10)", user: index < 20 ? nil : user,
                    anonymous: anonymous))
            messages.append(
                TestMessages.ingest("view", id: "w\(index)", session: "t1", user: "someone-else", anonymous: "a2"))
        }
        #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
        func files() throws -> [(String, [UInt8])] {
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).map { name in
                (name, Array(try Data(contentsOf: directory.url.appendingPathComponent(name))))
            }
        }
        func holds(_ bytes: [UInt8], _ text: String) -> Bool {
            let needle = Array(text.utf8)
            return bytes.count >= needle.count
                && (0...(bytes.count - needle.count)).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
        }
        // The check can fail: before the deletion the ids are there.
        #expect(try files().contains { holds($0.1, user) })

        let key = try #require(SuppressionKey(hex: String(repeating: "5c", count: 32)))
        let service = DeletionService(storage: storage, clock: ManualClock(), key: key)
        _ = try await service.delete(source: "default", userIds: [user], anonymousIds: [], suppress: true)
        for (name, bytes) in try files() {
            let (holdsUser, holdsAnonymous) = (holds(bytes, user), holds(bytes, anonymous))
            #expect(!holdsUser, "\(name) holds the user id")
            #expect(!holdsAnonymous, "\(name) holds the anonymous id")
        }
        #expect(try files().contains { holds($0.1, "someone-else") })
        try await storage.close()
        for (name, bytes) in try files() {
            let holdsAnID = holds(bytes, user) || holds(bytes, anonymous)
            #expect(!holdsAnID, "\(name) holds an id after closing")
        }
    }

    /// A device shared by two people: deleting its anonymous id deletes v's event on it, but v
    /// did the event that day on another device too, so v still counts; u, whose only event of the
    /// day was on it, no longer does. An alias that named a deleted id goes with it.
    @Test(arguments: StorageKind.available)
    func aDeletionKeepsThePeopleWithEventsLeftThatDay(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            try await storage.prepareDailyPeople(calendars: ["default": .utc], logger: Logger(label: "test"))
            let messages = [
                TestMessages.ingest("open", id: "e1", session: "s1", user: "v", anonymous: "shared", at: 60),
                TestMessages.ingest("open", id: "e2", session: "s2", user: "v", anonymous: "phone", at: 120),
                TestMessages.ingest("open", id: "e3", session: "s3", user: "u", anonymous: "shared", at: 180),
                TestMessages.ingest("open", id: "e4", session: "s4", user: nil, anonymous: "stranger", at: 240),
                AnalyticsTests.call(.alias, id: "al", user: "w", previous: "shared", at: 300),
            ]
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            let service = DeletionService(
                storage: storage, clock: ManualClock(),
                key: try #require(SuppressionKey(hex: String(repeating: "3e", count: 32))))
            _ = try await service.delete(source: "default", userIds: [], anonymousIds: ["shared"], suppress: false)

            let day = SourceCalendar.utc.day(of: Timestamp.milliseconds(TestMessages.base))
            let read = try await storage.dailyPeople(source: "default", event: "open", days: day...day)
            // v (on the phone) and the stranger are left; u is gone.
            #expect(read.people.union(day...day).count == 2)
            let numbers = try await storage.backend.query(
                "SELECT person FROM person_keys WHERE source = 'default' ORDER BY person", [])
            let persons = numbers.compactMap { $0.first?.text }
            #expect(persons.contains("v") && !persons.contains("shared"))
            #expect(try await Self.count(storage, "SELECT COUNT(*) FROM events WHERE type = 'alias'") == 0)
            #expect(try await Self.count(storage, "SELECT COUNT(*) FROM identities WHERE anonymous_id = 'shared'") == 0)
        }
    }

    @Test func theAPIDeletesSuppressesAndLifts() async throws {
        try await RouterHarness.run { client, services async throws in
            let batch = TestMessages.batch([
                TestMessages.track("a", id: "m1", user: "u9", anonymous: "a9"),
                TestMessages.track("b", id: "m2", user: "u8", anonymous: "a8"),
            ])
            _ = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey), body: ByteBuffer(json: batch))
            var headers = HTTPFields.bearer(RouterHarness.adminToken)
            headers[.contentType] = "application/json"
            let created = try await client.execute(
                uri: "/v1/admin/deletions", method: .post, headers: headers,
                body: ByteBuffer(string: #"{"userIds":["u9"],"suppress":true}"#))
            #expect(created.status == .created)
            #expect(try created.json["deleted"]?["events"] == 1)
            let id = try #require(try created.json["id"]?.stringValue)

            // u9's next events are refused, named by their place in the batch; u8's are stored.
            let later = TestMessages.batch([
                TestMessages.track("c", id: "m3", user: "u8", anonymous: "a8"),
                TestMessages.track("d", id: "m4", user: "u9", anonymous: "a9"),
            ])
            let refused = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey), body: ByteBuffer(json: later))
            #expect(refused.status == .ok)
            #expect(try refused.json["accepted"] == 1)
            #expect(try refused.json["rejected"]?[0]?["path"] == "batch[1].userId")
            #expect(services.deletions.refusedEvents == 1)

            let listed = try await client.execute(uri: "/v1/admin/deletions", method: .get, headers: headers)
            #expect(try listed.json["items"]?[0]?["id"]?.stringValue == id)
            let lifted = try await client.execute(uri: "/v1/admin/deletions/\(id)", method: .delete, headers: headers)
            #expect(lifted.status == .ok)
            let again = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey), body: ByteBuffer(json: later))
            #expect(try again.json["accepted"] == 1)  // m4 now; m3 is a duplicate

            // Bad requests name what is wrong.
            for (body, path) in [
                (#"{}"#, "userIds"), (#"{"userIds":"u1"}"#, "userIds"), (#"{"userIds":[1]}"#, "userIds[0]"),
                (#"{"userIds":["u1"],"suppress":"yes"}"#, "suppress"),
            ] {
                let bad = try await client.execute(
                    uri: "/v1/admin/deletions", method: .post, headers: headers, body: ByteBuffer(string: body))
                #expect(bad.status == .badRequest, "\(body)")
                #expect(try bad.json["path"]?.stringValue == path, "\(body)")
            }
            let unknown = try await client.execute(uri: "/v1/admin/deletions/del_x", method: .delete, headers: headers)
            #expect(unknown.status == .notFound)
        }
    }
}
