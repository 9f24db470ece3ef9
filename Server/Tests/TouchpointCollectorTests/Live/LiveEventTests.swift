import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// The feed hands out events whose JSON is parsed when a live view reads them, not while the
/// request that stored them waits; read, they are the same as events made whole.
struct LiveEventTests {
    @Test func aPublishedEventReadsAsTheStoredEventItStandsFor() async throws {
        let feed = LiveEventFeed()
        let subscription = try #require(feed.subscribe(source: "default"))
        let messages = [
            TestMessages.ingest("kept", id: "m1", user: "u1", properties: ["note": "line1\nline2", "n": 3]),
            TestMessages.ingest("duplicate", id: "m2"),
        ]
        feed.publish(messages, stored: [true, false], source: "default")
        feed.publish(messages, stored: [false, false], source: "other")
        feed.close()
        var received: [LiveEvent] = []
        for await live in subscription.events { received.append(live) }
        let live = try #require(received.first)
        #expect(received.count == 1)
        #expect(live.source == "default")
        #expect(live.event.messageId == "m1" && live.event.userId == "u1" && live.event.sequence == 0)
        #expect(live.event.message["properties"]?["note"] == "line1\nline2")
        #expect(live.event.message["properties"]?["n"] == 3)
        // The same as the event made whole, for equality and hashing alike.
        let whole = LiveEvent(source: "default", event: live.event)
        #expect(live == whole)
        #expect(Set([live, whole]).count == 1)
        var changed = live
        changed.event.userId = "u2"
        #expect(changed.event.userId == "u2" && changed != live)
    }
}
