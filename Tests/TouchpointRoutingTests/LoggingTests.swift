import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointRouting
import TouchpointTesting

struct EventDetailViewed: TrackableEvent {
    let identifier = EventIdentifier(object: "Event Detail", action: "Viewed")
    var metadata: [String: Any] { ["state": "rendering", "event_id": 21421] }
}

final class IntercomLikeAdapter: AnalyticsAdapter, Sendable {
    let name = "Intercom"
    func configure() {}
    func track(event: any TrackableEvent) {}
    func track(property: any TrackableProperty) {}
}

@Suite(.timeLimit(.minutes(2)))
struct LoggingTests {
    /// Runs `body` against a tracker at `level` with one adapter named Intercom, and returns
    /// what its log handler received.
    func messages(at level: GlobalTracker.LoggingLevel, _ body: (RoutingHarness) -> Void) async throws -> [String] {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let lines = LogLines()
        harness.tracker.loggingLevel = level
        harness.tracker.log { lines.append($0) }
        harness.tracker.startTracking(adapters: [IntercomLikeAdapter()])
        body(harness)
        #expect(await harness.delivered())
        return lines.all
    }

    @Test func infoLineIsTheSeedsCharacterForCharacter() async throws {
        let lines = try await messages(at: .info) { $0.tracker.trigger(EventDetailViewed()) }
        #expect(lines == ["-[Intercom]: EVENT TRIGGERED - 'Event Detail: Viewed'"])
    }

    @Test func verboseAddsOneLinePerPropertySortedByKey() async throws {
        let lines = try await messages(at: .verbose) { $0.tracker.trigger(EventDetailViewed()) }
        #expect(
            lines == ["-[Intercom]: EVENT TRIGGERED - 'Event Detail: Viewed'\n > event_id: 21421\n > state: rendering"])
    }

    @Test func untypedEventsAreLoggedTheSameWay() async throws {
        let lines = try await messages(at: .verbose) {
            $0.recorder.record(
                "checkout_success", properties: ["amount": .double(9.5), "items": ["a", "b"], "gift": .bool(false)])
        }
        #expect(
            lines == [
                "-[Intercom]: EVENT TRIGGERED - 'checkout_success'\n > amount: 9.5\n > gift: false\n > items: [\"a\",\"b\"]"
            ])
    }

    @Test func propertiesHaveTheirOwnLine() async throws {
        let info = try await messages(at: .info) { $0.tracker.update(EmailProperty(value: "test@test.com")) }
        #expect(info == ["-[Intercom]: PROPERTY UPDATED - 'email'"])
        let verbose = try await messages(at: .verbose) {
            $0.tracker.update(EmailProperty(value: "test@test.com"))
            $0.tracker.update(EmailProperty(value: nil))
        }
        #expect(
            verbose == [
                "-[Intercom]: PROPERTY UPDATED - 'email'\n > value: test@test.com",
                "-[Intercom]: PROPERTY UPDATED - 'email'\n > value: null",
            ])
    }

    @Test func levelNoneSaysNothing() async throws {
        let lines = try await messages(at: .none) {
            $0.tracker.trigger(EventDetailViewed())
            $0.tracker.trigger(Bad(metadata: ["x": NSObject()]))
        }
        #expect(lines.isEmpty)
    }

    @Test func unrecordableValuesAreReported() async throws {
        let lines = try await messages(at: .info) { $0.tracker.trigger(Bad(metadata: ["when": NSObject()])) }
        #expect(
            lines == [
                "-[GlobalTracker]: VALUE NOT RECORDED - 'Bad: Value' - when: a NSObject cannot be recorded as JSON",
                "-[Intercom]: EVENT TRIGGERED - 'Bad: Value'",
            ])
    }

    @Test func levelsAreOrdered() {
        #expect(GlobalTracker.LoggingLevel.none < .info)
        #expect(GlobalTracker.LoggingLevel.info < .verbose)
    }
}

/// An event with whatever metadata the test gives it.
struct Bad: TrackableEvent {
    let identifier = EventIdentifier(object: "Bad", action: "Value")
    let metadata: [String: Any]
}
