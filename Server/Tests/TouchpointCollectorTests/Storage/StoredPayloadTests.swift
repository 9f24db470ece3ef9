import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector
@testable import TouchpointCommands

/// Payloads are stored without the members their columns hold; every event still reads back as
/// the JSON value it arrived as.
struct StoredPayloadTests {
    /// Messages of every shape the collector takes, and some it must not mistake: escapes,
    /// repeated members, non-string ids, ids from the batch's context, no context, pretty printing.
    static let batchBody = #"""
        {"batch":[
          {"type":"track","event":"Checkout Started","messageId":"m-1","anonymousId":"a-1","userId":"u-1",
           "timestamp":"2026-01-02T03:04:05.678Z","properties":{"total":12.5},"context":{"sessionId":"s-1","locale":"de-DE"}},
          {"type":"page","name":"Home","messageId":"m-2","anonymousId":"a-1","originalTimestamp":"2026-01-02T03:04:06Z",
           "context":{"sessionId":"s-1"}},
          {"type":"screen","name":"Settings","messageId":"m-3","userId":42,"anonymousId":"a-2",
           "timestamp":"2026-01-02T04:04:06+01:00","context":{"library":{"name":"x"},"sessionId":"s-2"}},
          {"type":"track","event":"q\"uote","messageId":"m-\u00e9\\4","anonymousId":"a\u0301-3","properties":{}},
          {"type":"track","event":"a","event":"b","messageId":"m-5","anonymousId":"a-5","context":null},
          {"type":"identify","messageId":"m-6","userId":"u-6","traits":{"plan":"pro","sessionId":"not this"},
           "context":{"sessionId":"s-6","sessionId":"s-7"}},
          {"type":"alias","messageId":"m-7","previousId":"a-1","userId":"u-1"},
          {"type":"group","messageId":"m-8","userId":"u-1","groupId":"g-1","traits":{"name":"Acme"},"context":{}},
          {"type":"track","event":"no id","anonymousId":"a-9"},
          { "type" : "track" , "event" : "spaced" , "messageId" : "m-10" , "anonymousId" : "a-10" ,
            "context" : { "sessionId" : "s-10" , "page" : { "path" : "/" } } },
          {"type":"track","event":"batch session","messageId":"m-11","anonymousId":"a-11","context":{"ip":"1.2.3.4"}},
          {"type":"track","event":"emoji 🎉","messageId":"m-12","anonymousId":"🦊","context":{"sessionId":"s-🎉"}}
        ],"context":{"sessionId":"s-batch"}}
        """#

    @Test(arguments: StorageKind.available)
    func everyStoredEventReadsBackAsTheJSONValueItArrivedAs(kind: StorageKind) async throws {
        let body = Array(Self.batchBody.utf8)
        let request = try BatchDecoder().decode(body, endpoint: .batch, receivedAt: Timestamp.milliseconds(Date()))
        #expect(request.rejections.isEmpty, "\(request.rejections)")
        var web = SyntheticBatches(seed: 3)
        var history = HistoryBatches(seed: 3, client: 0, users: 20, days: 3, events: 200)
        let generated = try [web.batch(count: 100, at: Date()), history.batch(count: 100)].map {
            try BatchDecoder().decode($0, endpoint: .batch, receivedAt: Timestamp.milliseconds(Date())).messages
        }
        let messages = request.messages + generated.joined()
        try await withStorage(kind) { storage async throws in
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            let stored = try await storage.events(
                source: "default", filter: EventFilter(), page: PageRequest(limit: 1000))
            #expect(stored.items.count == messages.count)
            let byId = Dictionary(uniqueKeysWithValues: stored.items.map { ($0.messageId, $0) })
            for message in messages {
                let event = try #require(byId[message.messageId])
                #expect(event.message == (try JSONParser.parse(message.payload)), "\(message.payload)")
                #expect(event.originalTimestamp == message.originalTimestamp, "\(message.payload)")
            }
            // Stored smaller: the web events' ids and times are not kept twice.
            if kind == .sqlite {
                let sizes = try await storage.backend.query(
                    "SELECT SUM(LENGTH(payload)) FROM events", [])
                let received = messages.reduce(0) { $0 + $1.payload.utf8.count }
                #expect(try #require(sizes.first?.first?.int) < Int64(received) * 3 / 4)
                // The web events' library, locale and user agent are kept once per browser, and
                // the past traffic's library once.
                let shared = try await storage.backend.query(
                    "SELECT (SELECT COUNT(*) FROM contexts), (SELECT COUNT(*) FROM events WHERE context_id IS NOT NULL)",
                    [])
                #expect(try #require(shared.first?[0].int) >= 2)
                #expect(try #require(shared.first?[1].int) > 50)
                // An original timestamp that the corrected time gives back is not kept: here all but
                // the two written otherwise ("…06Z" without milliseconds, "…+01:00").
                let kept = try await storage.backend.query(
                    "SELECT message_id FROM events WHERE original_timestamp IS NOT NULL ORDER BY message_id", [])
                #expect(kept.compactMap { $0.first?.text } == ["m-2", "m-3"], "\(kept)")
                // Among them events whose sentAt corrected their time.
                let corrected = try await storage.backend.query(
                    "SELECT COUNT(*) FROM events WHERE original_timestamp IS NULL AND sent_at IS NOT NULL AND sent_at != received_at",
                    [])
                #expect(try #require(corrected.first?.first?.int) > 50)
            }
            // The export gives the messages as received too.
            let export = try await storage.exportPage(
                source: "default", range: TimeRange(), page: PageRequest(limit: 1000))
            let exported = try export.items.map { try JSONParser.parse(Array($0.utf8))["message"] }
            #expect(exported == stored.items.map(\.message))
        }
    }

    @Test func whatIsLiftedAndWhatIsKept() throws {
        let body = Array(Self.batchBody.utf8)
        let messages = try BatchDecoder().decode(body, endpoint: .batch, receivedAt: 0).messages
        func lifted(_ id: String) throws -> StoredPayload.Lifted {
            let message = try #require(messages.first { $0.messageId == id })
            return StoredPayload.compact(message.payload, columns: StoredPayload.Columns(message)).lifted
        }
        #expect(
            try lifted("m-1") == [.type, .event, .messageId, .anonymousId, .userId, .timestamp, .sessionId])
        // A context that held only the session id is left out whole, and comes back.
        #expect(
            try lifted("m-2") == [
                .type, .name, .messageId, .anonymousId, .originalTimestamp, .sessionId, .emptyContext,
            ])
        let page = try #require(messages.first { $0.messageId == "m-2" })
        let compacted = StoredPayload.compact(page.payload, columns: StoredPayload.Columns(page))
        #expect(!compacted.payload.contains("context"), "\(compacted.payload)")
        let restored = StoredPayload.restore(
            compacted.payload, lifted: compacted.lifted, columns: StoredPayload.Columns(page))
        #expect(try JSONParser.parse(restored) == JSONParser.parse(page.payload))
        // Not beside an escaped key, which could be another context.
        let escaped =
            #"{"type":"track","event":"e","messageId":"m","cont\u0065xt":{"a":1},"context":{"sessionId":"s"}}"#
        let columns = StoredPayload.Columns(
            messageId: "m", type: "track", name: "e", userId: nil, anonymousId: nil, originalTimestamp: nil,
            sessionId: "s")
        #expect(!StoredPayload.compact(escaped, columns: columns).lifted.contains(.emptyContext))
        // A context sent empty is kept as sent.
        #expect(try !lifted("m-8").contains(.emptyContext))
        #expect(try !lifted("m-1").contains(.emptyContext))
        // A number is not the string its column holds.
        #expect(try !lifted("m-3").contains(.userId))
        // Escaped text is kept as sent.
        #expect(try lifted("m-é\\4") == [.type])
        // A repeated member is kept, both copies.
        #expect(try !lifted("m-5").contains(.event))
        #expect(try !lifted("m-6").contains(.sessionId))
        // The batch's session id was not in the message.
        #expect(try !lifted("m-11").contains(.sessionId))
    }

    /// Compacting skips values by their structure: brackets and quotes inside strings, escapes at
    /// a string's end, nested containers, numbers and literals are each passed whole, so the ids
    /// after them are still found; bytes that are not a whole object are kept as they are.
    @Test func valuesOfEveryShapeArePassedWhole() throws {
        let tricky = #"""
            { "properties" : {"text":"a}b]c{\"[","end":"back\\","list":[[1,-2.5e+10],{"x":[]},"]"],"t":true,"f":false,"n":null},
              "count" : -0.5E-3 , "flag":true,"none":null,"empty":[],"nested":{"a":{"b":{"c":"}"}}},
              "type":"track","event":"e","messageId":"m","anonymousId":"a","context":{"page":{"path":"/{x}"},"sessionId":"s"} }
            """#
        let columns = StoredPayload.Columns(
            messageId: "m", type: "track", name: "e", userId: nil, anonymousId: "a", originalTimestamp: nil,
            sessionId: "s")
        let compacted = StoredPayload.compact(tricky, columns: columns)
        #expect(compacted.lifted == [.type, .event, .messageId, .anonymousId, .sessionId])
        let restored = StoredPayload.restore(compacted.payload, lifted: compacted.lifted, columns: columns)
        #expect(try JSONParser.parse(restored) == JSONParser.parse(tricky))
        for broken in [
            #"{"type":"track","messageId":"m"#, #"{"type":"track","a":[1,{"b":"]"}"#, "[1]", "", "{", #"{"a"}"#,
        ] {
            let kept = StoredPayload.compact(broken, columns: columns)
            #expect(kept == StoredPayload.Compacted(payload: broken, lifted: []), "\(broken)")
        }
    }

    /// A `track`, `page` or `screen` call of which only its `properties` object is left is kept as
    /// that object (when asked, as for SQLite), and comes back whole.
    @Test func aPayloadOfOnlyPropertiesIsKeptAsThatObject() throws {
        let cases: [(payload: String, type: String, unwrapped: Bool)] = [
            (
                #"{"type":"track","event":"e","messageId":"m","properties":{"plan":"free"},"context":{"sessionId":"s"}}"#,
                "track", true
            ),
            (#"{"type":"screen","name":"e","messageId":"m","properties" : { "a" : [1, {"b":null}] }}"#, "screen", true),
            (#"{"type":"page","name":"e","messageId":"m","properties":{}}"#, "page", true),
            // Something else left, or not an object, or not these calls: kept as it is.
            (#"{"type":"track","event":"e","messageId":"m","properties":{"a":1},"integrations":{}}"#, "track", false),
            (
                #"{"type":"track","event":"e","messageId":"m","properties":{"a":1},"context":{"sessionId":"s","ip":"x"}}"#,
                "track", false
            ),
            (#"{"type":"track","event":"e","messageId":"m","properties":[1]}"#, "track", false),
            (
                #"{"type":"track","event":"e","messageId":"m","properties":{"a":1},"properties":{"a":2}}"#, "track",
                false
            ),
            (#"{"type":"track","event":"e","messageId":"m","propert\u0069es":{"a":1}}"#, "track", false),
            (#"{"type":"identify","messageId":"m","properties":{"a":1}}"#, "identify", false),
        ]
        for (payload, type, unwrapped) in cases {
            let value = try JSONParser.parse(payload)
            let columns = StoredPayload.Columns(
                messageId: "m", type: type, name: type == "identify" ? nil : "e", userId: nil, anonymousId: nil,
                originalTimestamp: nil, sessionId: "s")
            let compacted = StoredPayload.compact(payload, columns: columns, unwrapProperties: true)
            #expect(compacted.lifted.contains(.properties) == unwrapped, "\(payload)")
            if unwrapped {
                #expect(try JSONParser.parse(compacted.payload) == value["properties"], "\(payload)")
            }
            let restored = StoredPayload.restore(compacted.payload, lifted: compacted.lifted, columns: columns)
            #expect(try JSONParser.parse(restored) == value, "\(payload)")
            // Not unless asked (PostgreSQL).
            #expect(!StoredPayload.compact(payload, columns: columns).lifted.contains(.properties))
        }
        // With its context shared too, and put back inline.
        let agent = String(repeating: "Mozilla/5.0 ", count: 8)
        let shared =
            #"{"type":"track","event":"e","messageId":"m","properties":{"a":1},"context":{"userAgent":"\#(agent)"}}"#
        let columns = StoredPayload.Columns(
            messageId: "m", type: "track", name: "e", userId: nil, anonymousId: nil, originalTimestamp: nil,
            sessionId: nil)
        let compacted = StoredPayload.compact(shared, columns: columns, shareContext: true, unwrapProperties: true)
        #expect(compacted.lifted.isSuperset(of: [.context, .emptyContext, .properties]), "\(compacted)")
        #expect(compacted.payload == #"{"a":1}"#)
        let value = try JSONParser.parse(shared)
        let fromRow = StoredPayload.restore(
            compacted.payload, lifted: compacted.lifted, columns: columns, sharedContext: compacted.sharedContext)
        #expect(try JSONParser.parse(fromRow) == value)
        let inline = compacted.inline
        #expect(!inline.lifted.contains(.properties))
        #expect(
            try JSONParser.parse(StoredPayload.restore(inline.payload, lifted: inline.lifted, columns: columns))
                == value)
    }

    /// Set apart, a context's shareable members come back where they were: inline (when the writer
    /// keeps them in the event) or from their row. Only distinct plain keys are set apart.
    @Test func aSharedContextComesBackAsItWas() throws {
        let userAgent = String(repeating: "Mozilla/5.0 ", count: 8)
        let payloads = [
            #"{"type":"track","event":"e","messageId":"m","context":{"sessionId":"s","page":{"path":"/"},"userAgent":"\#(userAgent)","locale":"en"}}"#,
            #"{"type":"page","name":"p","messageId":"m","context":{"userAgent":"\#(userAgent)"}}"#,
            #"{"type":"screen","name":"p","messageId":"m","context" : { "app" : {"v":[1,2]} , "userAgent":"\#(userAgent)" } }"#,
            // Not set apart: a repeated key, an escaped key, an identify call, a small context.
            #"{"type":"track","event":"e","messageId":"m","context":{"userAgent":"\#(userAgent)","userAgent":"x"}}"#,
            #"{"type":"track","event":"e","messageId":"m","context":{"user\u0041gent":"\#(userAgent)"}}"#,
            #"{"type":"identify","messageId":"m","context":{"userAgent":"\#(userAgent)"}}"#,
            #"{"type":"track","event":"e","messageId":"m","context":{"locale":"en-US","sessionId":"s"}}"#,
        ]
        var shared = 0
        for (index, payload) in payloads.enumerated() {
            let value = try JSONParser.parse(payload)
            let type = value["type"]?.stringValue ?? ""
            let columns = StoredPayload.Columns(
                messageId: "m", type: type, name: value["event"]?.stringValue ?? value["name"]?.stringValue,
                userId: nil, anonymousId: nil, originalTimestamp: nil, sessionId: index == 0 || index == 6 ? "s" : nil)
            let compacted = StoredPayload.compact(payload, columns: columns, shareContext: true)
            #expect((compacted.sharedContext != nil) == compacted.lifted.contains(.context))
            #expect((compacted.sharedContext != nil) == (index < 3), "\(payload)")
            // Nothing but the shared members and the session id: no context member is kept.
            #expect(compacted.lifted.contains(.emptyContext) == (index == 1 || index == 2), "\(payload)")
            #expect(compacted.payload.contains("context") == !compacted.lifted.contains(.emptyContext))
            if let body = compacted.sharedContext {
                shared += 1
                #expect(try JSONParser.parse(body)["userAgent"]?.stringValue == userAgent)
                #expect(!compacted.payload.contains("Mozilla"))
            }
            let fromRow = StoredPayload.restore(
                compacted.payload, lifted: compacted.lifted, columns: columns, sharedContext: compacted.sharedContext)
            #expect(try JSONParser.parse(fromRow) == value, "\(payload)")
            let inline = compacted.inline
            #expect(!inline.lifted.contains(.context) && inline.sharedContext == nil)
            #expect(
                try JSONParser.parse(StoredPayload.restore(inline.payload, lifted: inline.lifted, columns: columns))
                    == value, "\(payload)")
            // Without sharing, nothing is set apart.
            #expect(StoredPayload.compact(payload, columns: columns).sharedContext == nil)
        }
        #expect(shared == 3)
    }
}
