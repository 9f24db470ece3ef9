import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// Query strings as clients encode them: browsers submitting a form and Python's
/// `urllib.parse.urlencode` (which `requests` uses) send a space as `+`, JavaScript's
/// `encodeURIComponent` and curl's `--data-urlencode` as `%20`; a literal plus arrives as `%2B`.
/// Every route reads them through ``QueryParameters``.
struct QueryParametersTests {
    @Test func aPlusIsASpaceAndAnEscapedPlusIsAPlus() throws {
        // `urlencode({"event": "Order Completed", "q": "a+b", "v": "café \"x\""})` in Python 3.11.
        let parameters = try QueryParameters("event=Order+Completed&q=a%2Bb&v=caf%C3%A9+%22x%22")
        #expect(parameters.get("event") == "Order Completed")
        #expect(parameters.get("q") == "a+b")
        #expect(parameters.get("v") == "café \"x\"")
        // `encodeURIComponent("Order Completed")` in a browser.
        #expect(try QueryParameters("event=Order%20Completed").get("event") == "Order Completed")
    }

    @Test func namesAreDecodedTooAndTheFirstValueWins() throws {
        let parameters = try QueryParameters("where.0.value=a&where.0.value=b&flag&=empty&a+b=c")
        #expect(parameters.get("where.0.value") == "a")
        #expect(parameters.get("flag") == "")
        #expect(parameters.get("a b") == "c")
        #expect(parameters.names == ["where.0.value", "flag", "", "a b"])
        #expect(parameters.dictionary["where.0.value"] == "a")
        #expect(try QueryParameters(nil).pairs.isEmpty)
    }

    @Test func invalidEscapesAreTakenAsTheyAre() throws {
        #expect(try QueryParameters("v=100%").get("v") == "100%")
        #expect(try QueryParameters("v=%E9t%C3%A9").get("v") == "%E9t%C3%A9")  // Latin-1 é is not UTF-8
    }

    @Test func encodingThenDecodingGivesTheTextBack() throws {
        for text in ["Order Completed", "a+b", "50% off & more", "café", "e\u{301}", "=&?#", "\"'\\", "\r\n"] {
            let query = "v=" + QueryParameters.encoded(text)
            #expect(!query.contains(" ") && !query.contains("+"))
            #expect(try QueryParameters(query).get("v") == text)
        }
    }

    @Test func aNULInANameOrValueIsRefusedNamingIt() throws {
        #expect(
            throws: CollectorError(
                .invalidParameter, "event: holds a NUL character (%00), which no store keeps in text", path: "event")
        ) {
            try QueryParameters("from=2026-01-01&event=a%00b")
        }
        let error = try #require(throws: CollectorError.self) { try QueryParameters("ev%00ent=a") }
        #expect(error.code == .invalidParameter)
    }

    // MARK: Over HTTP

    /// Three `Application Opened` (the SDK's own automatic event, a name with a space) and an
    /// `Order Completed` whose coupon holds a plus, quotes and an accent.
    static func seed(_ client: any TestClientProtocol) async throws {
        let messages: [JSONValue] = [
            TestMessages.track("Application Opened", id: "o1", anonymous: "a1", at: 10),
            TestMessages.track("Application Opened", id: "o2", anonymous: "a2", at: 20),
            TestMessages.track("Application Opened", id: "o3", anonymous: "a1", at: 30),
            TestMessages.track(
                "Order Completed", id: "c1", anonymous: "a1", at: 40, properties: ["coupon": "1+1 \"café\""]),
        ]
        let response = try await client.execute(
            uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
            body: ByteBuffer(json: TestMessages.batch(messages)))
        #expect(try response.json["accepted"] == 4)
    }

    static let range = "from=2026-01-01T00%3A00%3A00Z&to=2026-01-02T00%3A00%3A00Z"

    @Test(arguments: StorageKind.insightStores)
    func everyRouteReadsAPlusAsASpace(kind: StorageKind) async throws {
        try await RouterHarness.run(storage: kind) { client, _ async throws in
            try await Self.seed(client)
            func total(_ query: String) async throws -> JSONValue? {
                let response = try await AnalyticsRouteTests.get(client, "/v1/query/trends?\(query)&\(Self.range)")
                #expect(response.status == .ok, "\(query)")
                return try response.json["totals"]?[0]?["count"]
            }
            // What a browser's form and Python send, then what JavaScript sends: the same answer.
            #expect(try await total("event=Application+Opened&interval=day") == 3)
            #expect(try await total("event=Application%20Opened&interval=day") == 3)
            // A filter's value with a plus (`%2B`), quotes and an accent, spaces as `+`
            // (`urlencode({"where.1.value": '1+1 "café"'})`).
            #expect(
                try await total(
                    "event=Order+Completed&interval=day&where.1.property=coupon&where.1.value=1%2B1+%22caf%C3%A9%22"
                ) == 1)
            #expect(
                try await total(
                    "event=Order+Completed&interval=day&where.1.property=coupon&where.1.value=1+1+%22caf%C3%A9%22"
                ) == 0)
            let funnel = try await AnalyticsRouteTests.get(
                client, "/v1/query/funnel?steps=Application+Opened,Order+Completed&window=1h&\(Self.range)")
            #expect(try funnel.json["steps"]?[1]?["users"] == 1)
            let events = try await AnalyticsRouteTests.get(client, "/v1/query/events?name=Application+Opened")
            #expect(try events.json["items"]?.arrayValue?.count == 3)
            let sessions = try await AnalyticsRouteTests.get(client, "/v1/query/sessions?event=Order+Completed")
            #expect(try sessions.json["items"]?.arrayValue?.count == 1)
        }
    }

    @Test(arguments: StorageKind.insightStores)
    func aNULInAnyParameterIsA400NamingIt(kind: StorageKind) async throws {
        try await RouterHarness.run(storage: kind) { client, _ async throws in
            try await Self.seed(client)
            for (uri, path) in [
                ("/v1/query/trends?event=Application%00Opened", "event"),
                ("/v1/query/trends?event=x&where.1.property=coupon&where.1.value=a%00", "where.1.value"),
                ("/v1/query/funnel?steps=a,b%00", "steps"),
                ("/v1/query/paths?start=a%00", "start"),
                ("/v1/query/events?name=%00", "name"),
                ("/v1/query/users?search=%00", "search"),
                ("/v1/query/users/u%001", "userId"),
                ("/v1/query/trends?event=x&source=%00", "source"),
            ] {
                let response = try await AnalyticsRouteTests.get(client, uri)
                #expect(response.status == .badRequest, "\(uri)")
                #expect(try response.json["code"] == "invalid_parameter", "\(uri)")
                #expect(try response.json["path"] == .string(path), "\(uri)")
            }
            // A saved insight or cohort holding NUL is refused, and nothing is stored.
            for (uri, body) in [
                ("/v1/insights", #"{"name":"Opens","kind":"trends","parameters":{"event":"a\u0000b"}}"#),
                ("/v1/insights", #"{"name":"Opens","kind":"trends","parameters":"event=a%00b"}"#),
                ("/v1/insights", #"{"name":"Op\u0000ens","kind":"trends","parameters":{"event":"a"}}"#),
                ("/v1/cohorts", #"{"name":"C","conditions":[{"event":"a\u0000"}]}"#),
            ] {
                let response = try await client.execute(
                    uri: uri, method: .post, headers: .bearer(RouterHarness.adminToken),
                    body: ByteBuffer(string: body))
                #expect(response.status == .badRequest, "\(body)")
            }
            let saved = try await AnalyticsRouteTests.get(client, "/v1/insights")
            #expect(try saved.json["items"]?.arrayValue?.isEmpty == true)
            let cohorts = try await AnalyticsRouteTests.get(client, "/v1/cohorts")
            #expect(try cohorts.json["items"]?.arrayValue?.isEmpty == true)
        }
    }
}

/// What clients that leave a `+` unescaped (Swift's `URLQueryItem`, a hand-typed URL) still get
/// right: a time's offset, and the cursors the API hands out, which hold no `+` (``OpaqueID``).
struct UnescapedPlusTests {
    @Test func aTimesOffsetKeepsItsPlus() {
        #expect(QueryParameters.timeText("2026-11-22T09:41:07 02:00") == "2026-11-22T09:41:07+02:00")
        #expect(QueryParameters.timeText("2026-11-22T09:41:07.5 0200") == "2026-11-22T09:41:07.5+0200")
        #expect(QueryParameters.timeText("2026-11-22T09:41:07Z") == "2026-11-22T09:41:07Z")
        #expect(QueryParameters.timeText("Order Completed") == "Order Completed")
        #expect(QueryParameters.timeText("2026-11-22T09:41 and 02:00") == "2026-11-22T09:41 and+02:00")
    }

    @Test func opaqueIDsRoundTripAndReadTheEarlierForm() {
        for id in ["ada+tag@example.com", "e\u{301}", "日本語", "a:b~c", "", String(repeating: "x", count: 300)] {
            let encoded = OpaqueID.encode(id)
            #expect(encoded.allSatisfy { $0 == "~" || $0.isHexDigit }, "\(encoded)")
            #expect(OpaqueID.decode(encoded).map { Array($0.utf8) } == Array(id.utf8))
        }
        #expect(OpaqueID.decode("ada@example.com") == "ada@example.com")  // a cursor of the earlier form
        #expect(OpaqueID.decode("~zz") == nil)
        #expect(OpaqueID.decode("~abc") == nil)
        #expect(OpaqueID.decode("~ff") == nil)  // not UTF-8
    }

    /// Keys whose fields split the same bytes differently are different keys, and hash apart.
    @Test func keysThatSplitTheSameBytesDifferentlyHashApart() {
        let one = DefinitionCounts.Key(source: "s", kind: .property, event: "ab", property: "c", type: "string")
        let two = DefinitionCounts.Key(source: "s", kind: .property, event: "a", property: "bc", type: "string")
        #expect(one != two)
        #expect(one.hashValue != two.hashValue)
    }

    @Test(arguments: StorageKind.available)
    func unescapedPlusesInTimesAndCursorsStillWork(kind: StorageKind) async throws {
        try await RouterHarness.run(storage: kind) { client, _ async throws in
            try await QueryParametersTests.seed(client)
            // 02:00 in +02:00 is midnight UTC: the day holds the three opens.
            let trend = try await AnalyticsRouteTests.get(
                client,
                "/v1/query/trends?event=Application+Opened&interval=day&from=2026-01-01T02:00:00+02:00&to=2026-01-02T02:00:00+02:00"
            )
            #expect(trend.status == .ok)
            #expect(try trend.json["totals"]?[0]?["count"] == 3)
            // Three users whose ids hold a `+`, paged one at a time, each cursor sent back as is
            // (a `+` in it would come back as a space, and the page after it would skip a user).
            let identify: [JSONValue] = (1...3).map { index in
                .object([
                    "type": "identify", "messageId": .string("i\(index)"),
                    "userId": .string("ada+\(index)@example.com"),
                    "traits": ["plan": "pro"],
                    // One time for all three: the pages' order is then by id alone, which the cursor holds.
                    "timestamp": .string(Timestamp.format(TestMessages.base.addingTimeInterval(100))),
                ])
            }
            let stored = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(json: TestMessages.batch(identify)))
            #expect(try stored.json["accepted"] == 3)
            var seen: [String] = []
            var cursor: String?
            for _ in 0..<4 {
                let page = try await AnalyticsRouteTests.get(
                    client, "/v1/query/users?limit=1" + (cursor.map { "&cursor=\($0)" } ?? ""))
                #expect(page.status == .ok)
                seen += try page.json["items"]?.arrayValue?.compactMap { $0["userId"]?.stringValue } ?? []
                cursor = try page.json["nextCursor"]?.stringValue
                if let cursor { #expect(!cursor.contains("+") && !cursor.contains("%")) }
                if cursor == nil { break }
            }
            #expect(seen.sorted() == ["ada+1@example.com", "ada+2@example.com", "ada+3@example.com"])
        }
    }

    /// A saved insight stored before NUL was refused is read with U+FFFD in its place; the list
    /// it is in stays readable.
    @Test(arguments: StorageKind.available)
    func aStoredInsightHoldingNULIsStillListed(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let saved = try await storage.saveInsight(
                source: "default",
                SavedInsight(
                    id: 0, name: "Old", kind: .trends, parameters: ["event": "a\u{0}b"], createdAt: 1, updatedAt: 1))
            #expect(saved?.parameters["event"] == "a\u{FFFD}b")
            #expect(try await storage.insights(source: "default", id: nil).map(\.name) == ["Old"])
        }
    }
}
