import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// The load generator's past traffic: what the analytics benchmarks fill a store with.
struct HistoryBatchesTests {
    @Test func pastTrafficHasSessionsSignInsAndAFunnelAndLandsInThePast() async throws {
        try await RouterHarness.run { client, services async throws in
            let now = Date()
            var history = HistoryBatches(seed: 3, client: 0, users: 200, days: 30, events: 4000, now: now)
            var sent = 0
            var previous = Date.distantPast
            var earliest = Date.distantFuture
            for _ in 0..<40 {
                let body = history.batch(count: 100)
                let batch = try JSONParser.parse(body)["batch"]?.arrayValue ?? []
                sent += batch.count
                for message in batch {
                    let time = try #require(Timestamp.parse(message["timestamp"]?.stringValue ?? ""))
                    #expect(time <= now && time > now.addingTimeInterval(-31 * 86_400))
                    // Day by day in order (a visit may start a few minutes before the last ended).
                    #expect(time > previous.addingTimeInterval(-3600))
                    previous = max(previous, time)
                    earliest = min(earliest, time)
                    if message["type"] == "identify" {
                        #expect(message["userId"] != nil && message["anonymousId"] != nil)
                    }
                }
                let response = try await client.execute(
                    uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
                    body: ByteBuffer(bytes: body))
                #expect(try response.json["accepted"] == .int(batch.count))
            }
            // The whole period is covered, from its first day to its last.
            #expect(previous > now.addingTimeInterval(-86_400 - 3600))
            #expect(earliest < now.addingTimeInterval(-29 * 86_400))
            let query = services.query
            let parameters = AnalyticsParameters(now: now) {
                ["steps": "product_viewed,cart_added,checkout_completed", "window": "1d"][$0]
            }
            let funnel = try await query.funnel(source: "default", try parameters.funnel())
            #expect(funnel.steps[0].users > funnel.steps[1].users)
            #expect(funnel.steps[1].users > funnel.steps[2].users)
            #expect(funnel.steps[2].users > 0)
            let people = try await query.people(source: "default", page: PageRequest(limit: 1000))
            #expect(!people.items.isEmpty)
            #expect(people.items.allSatisfy { $0.userId.hasPrefix("user-0-") })
            #expect(people.items.contains { $0.traits["email"] != nil })
            #expect(try await query.counts(source: "default").events == sent)
        }
    }
}
