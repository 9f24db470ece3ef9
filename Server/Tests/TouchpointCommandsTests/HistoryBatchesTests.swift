import Foundation
import Testing
import TouchpointCollector
import TouchpointCore

@testable import TouchpointCommands

/// The load generator's past traffic: what the analytics benchmarks fill a store with.
struct HistoryBatchesTests {
    @Test func pastTrafficHasSessionsSignInsAndAFunnelAndLandsInThePast() async throws {
        try await LocalCollector.run { collector in
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
                #expect(try await LocalCollector.post(body, to: collector)["accepted"] == .int(batch.count))
            }
            // The whole period is covered, from its first day to its last.
            #expect(previous > now.addingTimeInterval(-86_400 - 3600))
            #expect(earliest < now.addingTimeInterval(-29 * 86_400))
            let funnel = try await LocalCollector.query(
                "/v1/query/funnel?steps=product_viewed,cart_added,checkout_completed&window=1d", of: collector)
            let users = try #require(funnel["steps"]?.arrayValue).map { $0["users"]?.intValue ?? -1 }
            #expect(users.count == 3)
            #expect(users[0] > users[1])
            #expect(users[1] > users[2])
            #expect(users[2] > 0)
            let people = try #require(
                try await LocalCollector.query("/v1/query/users?limit=1000", of: collector)["items"]?.arrayValue)
            #expect(!people.isEmpty)
            #expect(people.allSatisfy { $0["userId"]?.stringValue?.hasPrefix("user-0-") == true })
            #expect(people.contains { $0["traits"]?["email"] != nil })
            #expect(try await LocalCollector.query("/v1/query/counts", of: collector)["events"] == .int(sent))
        }
    }
}

/// The load generator's live traffic: what `touchpoint loadgen` sends by default.
struct SyntheticBatchesTests {
    @Test func liveTrafficIsWebTrafficWithRandomIdsAndManySessionsPerVisitor() async throws {
        try await LocalCollector.run { collector in
            var batches = SyntheticBatches(seed: 5)
            var sessionsOf: [String: Set<String>] = [:]
            var agentsOf: [String: Set<String>] = [:]
            var ids = Set<String>()
            var bytes = 0
            var events = 0
            for _ in 0..<30 {
                let body = batches.batch(count: 100, at: Date())
                let batch = try JSONParser.parse(body)["batch"]?.arrayValue ?? []
                bytes += body.count
                events += batch.count
                // Each batch interleaves the events of many visits.
                let sessions = Set(batch.compactMap { $0["context"]?["sessionId"]?.stringValue })
                #expect(sessions.count >= 20)
                for message in batch {
                    let id = try #require(message["messageId"]?.stringValue)
                    let uuid = try #require(UUID(uuidString: id))
                    #expect(uuid.uuid.6 >> 4 == 4, "\(id) is not a version 4 UUID")
                    ids.insert(id)
                    let visitor = try #require(message["anonymousId"]?.stringValue)
                    sessionsOf[visitor, default: []].insert(message["context"]?["sessionId"]?.stringValue ?? "")
                    agentsOf[visitor, default: []].insert(message["context"]?["userAgent"]?.stringValue ?? "")
                }
                #expect(try await LocalCollector.post(body, to: collector)["accepted"] == .int(batch.count))
            }
            #expect(ids.count == events)
            // Visitors come back: some have several sessions.
            #expect(sessionsOf.values.filter { $0.count > 1 }.count > 10)
            // Each visitor on one browser; visitors on many.
            #expect(agentsOf.values.allSatisfy { $0.count == 1 && !$0.contains("") })
            #expect(Set(agentsOf.values.flatMap { $0 }).count > 20)
            // A web SDK's sizes: a few hundred bytes an event.
            #expect((250...600).contains(bytes / events), "\(bytes / events) bytes an event")
            let counts = try await LocalCollector.query("/v1/query/counts", of: collector)
            #expect(counts["events"] == .int(events))
            #expect((counts["sessions"]?.intValue ?? 0) > 100)
        }
    }

    @Test func timeOrderedIdsWhenAskedFor() throws {
        var batches = SyntheticBatches(seed: 5, randomIds: false)
        let batch = try JSONParser.parse(batches.batch(count: 50, at: Date()))["batch"]?.arrayValue ?? []
        let versions = try batch.map { message in
            try #require(UUID(uuidString: message["messageId"]?.stringValue ?? "")).uuid.6 >> 4
        }
        #expect(versions == Array(repeating: 7, count: 50))
    }

    /// Two runs with one seed send the same mix but different messages.
    @Test func aSecondRunWithTheSameSeedSendsNewMessages() throws {
        var first = SyntheticBatches(seed: 9)
        var second = SyntheticBatches(seed: 9)
        let date = Date()
        let one = try JSONParser.parse(first.batch(count: 20, at: date))["batch"]?.arrayValue ?? []
        let two = try JSONParser.parse(second.batch(count: 20, at: date))["batch"]?.arrayValue ?? []
        #expect(one.map { $0["type"] } == two.map { $0["type"] })
        let firstIds = Set(one.compactMap { $0["messageId"]?.stringValue })
        let secondIds = two.compactMap { $0["messageId"]?.stringValue }
        #expect(firstIds.count == 20 && firstIds.isDisjoint(with: secondIds))
    }
}
