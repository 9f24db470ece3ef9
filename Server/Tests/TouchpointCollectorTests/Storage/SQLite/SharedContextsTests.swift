import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// SQLite keeps a context that events repeat once, in `contexts` (schema 14): from the second time
/// it is seen, counted by the events that name it, gone with the last of them; every event still
/// reads back as the JSON value it arrived as.
struct SharedContextsTests {
    static let browser: [String: JSONValue] = [
        "library": ["name": "analytics.js", "version": "next-1.72.0"], "locale": "en-US",
        "userAgent":
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
    ]

    /// A track call whose context holds `context` beside its session and page.
    static func event(
        _ id: String, user: String? = nil, anonymous: String = "anon-1", session: String = "s1",
        context: [String: JSONValue] = browser, type: MessageType = .track, at offset: TimeInterval = 0
    ) throws -> IngestMessage {
        var message = TestMessages.ingest(
            "clicked", id: id, type: type, session: session, user: user, anonymous: anonymous, at: offset)
        guard case .object(var payload) = try JSONParser.parse(message.payload) else {
            throw JSONParseError(offset: 0, reason: "")
        }
        var merged = context
        merged["sessionId"] = .string(session)
        merged["page"] = ["path": .string("/\(id)")]
        payload["context"] = .object(merged)
        if let user { payload["userId"] = .string(user) }
        payload["anonymousId"] = .string(anonymous)
        // Sorted keys: the same context is the same text in every event, as an SDK sends it.
        message.payload = JSONValue.object(payload).jsonString(sortedKeys: true)
        return message
    }

    /// The `contexts` rows: each one's text and count of events.
    static func rows(_ storage: SQLCollectorStorage) async throws -> [String: Int64] {
        let rows = try await storage.backend.query("SELECT body, events FROM contexts", [])
        return Dictionary(uniqueKeysWithValues: rows.map { ($0[0].text ?? "", $0[1].int ?? -1) })
    }

    /// How many stored events name a shared context.
    static func naming(_ storage: SQLCollectorStorage) async throws -> Int64 {
        try await storage.backend.query("SELECT COUNT(*) FROM events WHERE context_id IS NOT NULL", [])
            .first?.first?.int ?? -1
    }

    static func expectReadBack(_ storage: SQLCollectorStorage, _ messages: [IngestMessage]) async throws {
        let stored = try await storage.events(source: "default", filter: EventFilter(), page: PageRequest(limit: 1000))
        let byId = Dictionary(uniqueKeysWithValues: stored.items.map { ($0.messageId, $0.message) })
        #expect(byId.count == messages.count)
        for message in messages {
            #expect(byId[message.messageId] == (try JSONParser.parse(message.payload)), "\(message.messageId)")
        }
    }

    @Test func aContextGetsItsRowTheSecondTimeItIsSeen() async throws {
        try await withStorage(.sqlite) { storage async throws in
            let messages = try (0..<5).map { try Self.event("m\($0)", at: Double($0)) }
            #expect(try await storage.insert([messages[0]], source: "default") == [true])
            // Seen once: kept in its event.
            #expect(try await Self.rows(storage).isEmpty)
            #expect(try await Self.naming(storage) == 0)
            #expect(try await storage.insert([messages[1]], source: "default") == [true])
            let rows = try await Self.rows(storage)
            #expect(rows.count == 1)
            #expect(rows.first?.value == 1)
            // The row holds the context but its page and session, and nothing else.
            let body = try JSONParser.parse(try #require(rows.first?.key))
            #expect(body == .object(Self.browser))
            // Later events, and the same ones again, add only what they store.
            #expect(try await storage.insert(Array(messages[1...]), source: "default") == [false, true, true, true])
            #expect(try await Self.rows(storage).first?.value == 4)
            #expect(try await Self.naming(storage) == 4)
            try await Self.expectReadBack(storage, messages)
            // Stored without it: the events' payloads are shorter than the row by far.
            let longest = try await storage.backend.query(
                "SELECT MAX(LENGTH(payload)) FROM events WHERE context_id IS NOT NULL", [])
            #expect(try #require(longest.first?.first?.int) < 100)
        }
    }

    @Test func twoEventsOfOneWriteShareAtOnceAndOthersStayInline() async throws {
        try await withStorage(.sqlite) { storage async throws in
            var other = Self.browser
            other["userAgent"] =
                "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148"
            let messages = try [
                Self.event("a1"), Self.event("a2"), Self.event("b1", context: other),
                // Too small to be worth a row; an identify call (the people pages read it as stored).
                Self.event("c1", context: ["locale": "en-US"]), Self.event("c2", context: ["locale": "en-US"]),
                Self.event("i1", context: Self.browser, type: .identify),
                Self.event("i2", context: Self.browser, type: .identify),
            ]
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            let rows = try await Self.rows(storage)
            #expect(rows.count == 1)
            #expect(rows.first?.value == 2)
            #expect(try await Self.naming(storage) == 2)
            try await Self.expectReadBack(storage, messages)
        }
    }

    /// A context can name a person (an IP address): deleting a user's data deletes the rows that
    /// only their events named, and retention the rows of the events it deletes.
    @Test func aRowGoesWithTheLastEventThatNamesIt() async throws {
        try await withStorage(.sqlite) { storage async throws in
            var theirs = Self.browser
            theirs["ip"] = "203.0.113.7"
            let messages = try [
                Self.event("u1", user: "user-1", anonymous: "anon-u", session: "su", context: theirs, at: 0),
                Self.event("u2", user: "user-1", anonymous: "anon-u", session: "su", context: theirs, at: 1),
                Self.event("o1", anonymous: "anon-o", session: "so", at: 2),
                Self.event("u3", user: "user-1", anonymous: "anon-u", session: "su", at: 3),
                Self.event("o2", anonymous: "anon-o", session: "so", at: 4),
            ]
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            let before = try await Self.rows(storage)
            #expect(before.values.sorted() == [2, 3], "\(before)")
            let deletion = StoredDeletion(
                id: "d1", source: "default", body: "{}", suppressing: false, requestedAt: 0, liftedAt: nil)
            let deleted = try await storage.deleteUserData(
                deletion, userIds: ["user-1"], anonymousIds: [], suppress: [])
            #expect(deleted.events == 3)
            let left = try await Self.rows(storage)
            #expect(left.count == 1)
            #expect(left.first?.value == 2)
            #expect(left.keys.allSatisfy { !$0.contains("203.0.113.7") })
            try await Self.expectReadBack(storage, [messages[2], messages[4]])

            let late = Timestamp.milliseconds(TestMessages.base.addingTimeInterval(3600)) / 60_000
            #expect(try await storage.deleteEvents(source: "default", beforeMinute: late, limit: 1) == 1)
            #expect(try await Self.rows(storage).first?.value == 1)
            #expect(try await storage.deleteEvents(source: "default", beforeMinute: late, limit: 10) == 1)
            #expect(try await Self.rows(storage).isEmpty)
        }
    }

    /// The writer adds to a context's row by the id it remembers, and only while that row still
    /// holds the context: a row deleted with its events, its id given to another context, takes in
    /// nothing of the first one's.
    @Test func aRememberedRowIsAddedToOnlyWhileItHoldsTheContext() async throws {
        try await withStorage(.sqlite) { storage async throws in
            let contexts = try #require(storage.sqliteWriter?.contexts)
            var theirs = Self.browser
            theirs["ip"] = "203.0.113.7"
            func event(_ id: String, user: String? = nil, context: [String: JSONValue]) throws -> IngestMessage {
                try Self.event(id, user: user, anonymous: "anon-\(user ?? "o")", session: "s-\(id)", context: context)
            }
            let first = try (1...3).map { try event("u\($0)", user: "user-1", context: theirs) }
            #expect(try await storage.insert(Array(first[0..<2]), source: "default") == [true, true])
            #expect(try await storage.insert([first[2]], source: "default") == [true])
            #expect(contexts.addedById == 1)
            let rowid = try #require(try await storage.backend.query("SELECT id FROM contexts", []).first?.first?.int)
            #expect(try await Self.rows(storage).values.sorted() == [3])
            let deletion = StoredDeletion(
                id: "d1", source: "default", body: "{}", suppressing: false, requestedAt: 0, liftedAt: nil)
            _ = try await storage.deleteUserData(deletion, userIds: ["user-1"], anonymousIds: [], suppress: [])
            #expect(try await Self.rows(storage).isEmpty)
            // Another context gets the deleted row's id.
            let others = try (1...2).map { try event("o\($0)", context: Self.browser) }
            #expect(try await storage.insert(others, source: "default") == [true, true])
            #expect(try await storage.backend.query("SELECT id FROM contexts", []).first?.first?.int == rowid)
            // The first context again: its remembered id is the other's row now, which stays as it was.
            let again = try (4...5).map { try event("u\($0)", user: "user-2", context: theirs) }
            #expect(try await storage.insert(again, source: "default") == [true, true])
            #expect(contexts.addedById == 1)
            let rows = try await Self.rows(storage)
            #expect(rows.count == 2)
            #expect(rows.values.sorted() == [2, 2])
            try await Self.expectReadBack(storage, others + again)
            // Each of them is added to by its id from now on.
            #expect(
                try await storage.insert([try event("u6", user: "user-2", context: theirs)], source: "default") == [
                    true
                ])
            #expect(try await storage.insert([try event("o3", context: Self.browser)], source: "default") == [true])
            #expect(contexts.addedById == 3)
            #expect(try await Self.rows(storage).values.sorted() == [3, 3])
        }
    }

    /// PostgreSQL keeps every context inline (its writes run in parallel).
    @Test(arguments: StorageKind.available.filter { $0 != .sqlite })
    func postgresKeepsContextsInline(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let messages = try (0..<4).map { try Self.event("m\($0)", at: Double($0)) }
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            #expect(try await storage.insert(messages, source: "default").allSatisfy { !$0 })
            #expect(try await Self.rows(storage).isEmpty)
            try await Self.expectReadBack(storage, messages)
        }
    }
}

/// The request shapes the SDKs send (``SDKRequestShapesTests``) read back the same when their
/// contexts are kept once: an app's, a browser's, RudderStack's with a numeric session id.
struct SharedContextsSDKShapesTests {
    static let browserPage = """
        {"batch":[{"type":"page","properties":{"path":"/","url":"https://shop.example.com/"},"name":null,"context":{"page":{"path":"/","referrer":"","title":"Shop"},"userAgent":"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15","userAgentData":{"brands":[{"brand":"Chromium","version":"131"}],"mobile":false,"platform":"macOS"},"locale":"en-US","library":{"name":"analytics.js","version":"next-1.70.0"}},"anonymousId":"ajs-anon","timestamp":"2026-01-01T10:00:00.000Z","integrations":{},"messageId":"ajs-1","userId":null,"_metadata":{"bundled":["Segment.io"],"unbundled":[],"bundledIds":[]}}],"sentAt":"2026-01-01T10:00:00.500Z"}
        """
    static let rudderStack = """
        {"batch":[{"type":"track","event":"Product Viewed","properties":{"id":"p-1"},"messageId":"rs-1","anonymousId":"rs-anon","channel":"mobile","originalTimestamp":"2026-01-01T10:00:00.000Z","context":{"sessionId":1767261590000,"library":{"name":"com.rudderstack.android.sdk.core","version":"1.20.0"},"traits":{"anonymousId":"rs-anon"}},"integrations":{"All":true}}],"sentAt":"2026-01-01T10:00:03.000Z"}
        """

    /// Each body's events, three times over with new message ids.
    static func copies(of body: String) throws -> [IngestMessage] {
        let decoded = try BatchDecoder().decode(Array(body.utf8), endpoint: .batch, receivedAt: 1_767_261_605_000)
        #expect(decoded.rejections.isEmpty, "\(decoded.rejections)")
        return decoded.messages.flatMap { message in
            (0..<3).map { copy in
                var message = message
                let id = "\(message.messageId)-copy-\(copy)"
                message.payload = message.payload.replacingOccurrences(
                    of: "\"messageId\":\"\(message.messageId)\"", with: "\"messageId\":\"\(id)\"")
                message.messageId = id
                return message
            }
        }
    }

    @Test func everySDKsEventReadsBackTheSame() async throws {
        let messages = try [SDKRequestShapesTests.analyticsSwiftBody, Self.browserPage, Self.rudderStack]
            .flatMap(Self.copies)
        try await withStorage(.sqlite) { storage async throws in
            for message in messages {
                #expect(try await storage.insert([message], source: "default") == [true])
            }
            try await SharedContextsTests.expectReadBack(storage, messages)
            // The app's, the browser's and RudderStack's contexts, and the screen call's library,
            // each kept once from its second event.
            let rows = try await SharedContextsTests.rows(storage)
            #expect(rows.count == 4, "\(rows.keys)")
            #expect(rows.values.allSatisfy { $0 == 2 })
            #expect(rows.keys.contains { $0.contains("iPhone15,2") && $0.contains("Europe/Berlin") })
            #expect(rows.keys.contains { $0.contains("userAgentData") && !$0.contains("referrer") })
        }
    }
}
