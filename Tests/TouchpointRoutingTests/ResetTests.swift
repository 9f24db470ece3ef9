import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointRouting
import TouchpointTesting

/// A reset of the recorder's identity (a sign-out) reaches every adapter as `reset()`, in log
/// order, so a tool that keeps the user does not hand the next person's events to the previous one.
@Suite(.timeLimit(.minutes(2)))
struct ResetTests {
    /// An adapter that keeps a tool's idea of the user: the anonymous id of each event it is sent
    /// and its resets, in the order it received them.
    final class IdentityKeepingAdapter: AnalyticsAdapter, Sendable {
        enum Call: Sendable, Hashable {
            case event(name: String, anonymousId: String?)
            case reset
        }

        private let received = Locked<[Call]>([])
        let failsReset: Bool

        init(failsReset: Bool = false) { self.failsReset = failsReset }

        var calls: [Call] { received.value }

        func configure() {}

        func track(event: any TrackableEvent) {
            let anonymousId = (event as? RecordedEvent)?.event.anonymousId
            received.withLock { $0.append(.event(name: event.identifier.stringValue, anonymousId: anonymousId)) }
        }

        func track(property: any TrackableProperty) {}

        func reset() throws {
            received.withLock { $0.append(.reset) }
            if failsReset { throw AdapterFailure(what: "reset") }
        }
    }

    /// An adapter written before `reset()` existed: it compiles, and the default does nothing.
    final class StatelessAdapter: AnalyticsAdapter, Sendable {
        let received = InMemoryAdapter()
        func configure() {}
        func track(event: any TrackableEvent) { received.track(event: event) }
        func track(property: any TrackableProperty) { received.track(property: property) }
    }

    @Test func adaptersForgetTheUserAfterTheirLastEventAndBeforeTheNextUsersFirst() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let adapter = InMemoryAdapter(name: "Mixpanel")
        let stateless = StatelessAdapter()
        harness.tracker.startTracking(adapters: [adapter, stateless])

        harness.recorder.record("identify", properties: ["email": "a@example.com"], type: .identify, userID: "u-1")
        harness.recorder.record("Signed Out")
        harness.recorder.resetIdentity()
        harness.recorder.record("Browsed")
        #expect(await harness.delivered())

        #expect(
            adapter.deliveries == [
                .property(identifier: "email", value: "a@example.com", type: "RecordedProperty"),
                .event(name: "Signed Out", metadata: [:], type: "RecordedEvent"),
                .reset,
                .event(name: "Browsed", metadata: [:], type: "RecordedEvent"),
            ])
        #expect(stateless.received.eventNames == ["Signed Out", "Browsed"])
        let statistics = harness.tracker.statistics
        #expect(statistics.received == 3, "a reset is not an event")
        #expect(statistics[adapter: "Mixpanel"]?.delivered == 3)
        #expect(statistics[adapter: "Mixpanel"]?.failed == 0)
    }

    /// Events recorded on another thread while the identity resets reach the adapter on the side
    /// of `reset()` their ids say: the previous anonymous id before it, the new one after.
    @Test func theResetIsOrderedWithEventsRecordedMeanwhile() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let adapter = IdentityKeepingAdapter()
        harness.tracker.startTracking(adapters: [adapter])
        let recorder = harness.recorder
        let before = recorder.anonymousId
        let started = Gate()
        let recording = Task.detached {
            for index in 0..<2_000 {
                recorder.record("tick \(index)")
                if index == 100 { started.open() }
            }
        }
        await started.pass()
        let after = recorder.resetIdentity()
        await recording.value
        #expect(await harness.delivered())

        let calls = adapter.calls
        let resetAt = try #require(calls.firstIndex(of: .reset))
        #expect(calls.filter { $0 == .reset }.count == 1)
        let ids = calls.map { call -> String? in
            if case .event(_, let anonymousId) = call { return anonymousId }
            return nil
        }
        #expect(ids[..<resetAt].allSatisfy { $0 == before })
        #expect(ids[(resetAt + 1)...].allSatisfy { $0 == after })
        #expect(calls.count == 2_001)
    }

    @Test func aFailingResetIsCountedAndLaterEventsStillArrive() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let lines = LogLines()
        harness.tracker.loggingLevel = .info
        harness.tracker.log { lines.append($0) }
        let adapter = IdentityKeepingAdapter(failsReset: true)
        harness.tracker.startTracking(adapters: [adapter])
        harness.recorder.resetIdentity()
        harness.recorder.record("Browsed")
        #expect(await harness.delivered())
        #expect(adapter.calls.map { $0 == .reset } == [true, false])
        #expect(harness.tracker.statistics[adapter: "IdentityKeepingAdapter"]?.failed == 1)
        #expect(lines.all.contains { $0.contains("RESET FAILED") && $0.contains("refused reset") })
    }

    /// An adapter so far behind that the queue drops events for it still forgets the user before
    /// the next user's events.
    @Test func aLaggingAdapterStillGetsTheReset() async throws {
        var configuration = GlobalTrackerConfiguration()
        configuration.queueCapacity = 4
        let harness = try RoutingHarness(configuration: configuration)
        defer { harness.tracker.stopTracking() }
        let slow = GatedAdapter(name: "Slow")
        harness.tracker.startTracking(adapters: [slow])
        harness.recorder.record("first")
        #expect(await eventually { slow.gate.waiting == 1 }, "the adapter is busy with the first event")
        for index in 0..<3 { harness.recorder.record("before \(index)") }
        harness.recorder.resetIdentity()
        for index in 0..<6 { harness.recorder.record("after \(index)") }
        slow.gate.open(100)
        #expect(await harness.delivered())
        #expect(slow.resets == 1)
        #expect(slow.received.eventNames.prefix(1) == ["first"])
        #expect(slow.received.eventNames.suffix(4) == ["after 2", "after 3", "after 4", "after 5"])
        #expect(harness.tracker.statistics[adapter: "Slow"]?.dropped == 5, "3 before and 2 after; not the reset")
    }

    /// Deleting what was recorded (an opt-out that discards it) forgets the user too.
    @Test func clearingTheRecorderResetsTheAdapters() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let adapter = InMemoryAdapter()
        harness.tracker.startTracking(adapters: [adapter])
        harness.recorder.record("identify", properties: ["plan": "pro"], type: .identify, userID: "u-2")
        await harness.recorder.optOut(discardingPending: true)
        #expect(await harness.delivered())
        #expect(adapter.deliveries.last == .reset)
    }
}
