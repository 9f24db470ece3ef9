import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointRouting
import TouchpointTesting

@Suite(.timeLimit(.minutes(2)))
struct RuleTests {
    @Test func eventRulesByTypeAndByName() {
        let typedTap: any TrackableEvent = Tapped()
        let untypedTap: any TrackableEvent = RecordedEvent(
            Event(name: "Button: Tapped", sessionId: UUID(), userId: nil, anonymousId: "a"))
        let view: any TrackableEvent = Viewed()

        let allowType = EventTrackingRule(.allow, types: [Tapped.self])
        #expect(allowType.allows(typedTap))
        #expect(!allowType.allows(untypedTap))  // a type does not match an untyped event
        #expect(!allowType.allows(view))

        let allowName = EventTrackingRule(.allow, names: ["Button: Tapped"])
        #expect(allowName.allows(typedTap))
        #expect(allowName.allows(untypedTap))
        #expect(!allowName.allows(view))

        let prohibitType = EventTrackingRule(.prohibit, types: [Tapped.self])
        #expect(!prohibitType.allows(typedTap))
        #expect(prohibitType.allows(untypedTap))
        #expect(prohibitType.allows(view))

        let prohibitName = EventTrackingRule(.prohibit, names: ["Button: Tapped"])
        #expect(!prohibitName.allows(typedTap))
        #expect(!prohibitName.allows(untypedTap))
        #expect(prohibitName.allows(view))
    }

    @Test func propertyRulesByTypeAndByName() {
        let email: any TrackableProperty = EmailProperty(value: "a@b.c")
        let untypedEmail: any TrackableProperty = RecordedProperty(
            identifier: "email", value: "a@b.c",
            event: Event(type: .identify, name: "identify", sessionId: UUID(), userId: nil, anonymousId: "a"))
        let age: any TrackableProperty = AgeProperty(value: 40)

        #expect(PropertyTrackingRule(.allow, types: [EmailProperty.self]).allows(email))
        #expect(!PropertyTrackingRule(.allow, types: [EmailProperty.self]).allows(untypedEmail))
        #expect(!PropertyTrackingRule(.allow, types: [EmailProperty.self]).allows(age))
        #expect(PropertyTrackingRule(.allow, names: ["email"]).allows(untypedEmail))
        #expect(!PropertyTrackingRule(.prohibit, names: ["email"]).allows(email))
        #expect(PropertyTrackingRule(.prohibit, types: [EmailProperty.self]).allows(age))
    }

    @Test func eachAdapterReceivesWhatItsRulesAllow() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let everything = InMemoryAdapter(name: "Everything")
        let onlyTaps = InMemoryAdapter(
            name: "OnlyTaps", eventTrackingRule: EventTrackingRule(.allow, types: [Tapped.self]))
        let noTapsByName = InMemoryAdapter(
            name: "NoTaps", eventTrackingRule: EventTrackingRule(.prohibit, names: ["Button: Tapped"]))
        let checkoutOnly = InMemoryAdapter(
            name: "Checkout", eventTrackingRule: EventTrackingRule(.allow, names: ["checkout_success"]),
            propertyTrackingRule: PropertyTrackingRule(.allow, names: ["age"]))
        let noEmail = InMemoryAdapter(
            name: "NoEmail", propertyTrackingRule: PropertyTrackingRule(.prohibit, types: [EmailProperty.self]))
        harness.tracker.startTracking(adapters: [everything, onlyTaps, noTapsByName, checkoutOnly, noEmail])

        harness.tracker.trigger(Tapped())
        harness.tracker.trigger(Viewed())
        harness.recorder.record("Button: Tapped")
        harness.recorder.record("checkout_success", properties: ["amount": .int(12)])
        harness.tracker.update(EmailProperty(value: "a@b.c"))
        harness.tracker.update(AgeProperty(value: 40))
        harness.recorder.record("identify", properties: ["email": "x@y.z"], type: .identify)
        #expect(await harness.delivered())

        #expect(
            everything.eventNames == ["Button: Tapped", "Screen: Viewed", "Button: Tapped", "checkout_success"])
        #expect(onlyTaps.eventNames == ["Button: Tapped"])
        #expect(noTapsByName.eventNames == ["Screen: Viewed", "checkout_success"])
        #expect(checkoutOnly.eventNames == ["checkout_success"])
        #expect(checkoutOnly.properties.map(\.identifier) == ["age"])
        #expect(noEmail.properties.map(\.identifier) == ["age", "email"])  // the untyped email passes
        #expect(noEmail.properties.map(\.value) == [.int(40), .string("x@y.z")])
        #expect(harness.tracker.statistics[adapter: "OnlyTaps"]?.skippedByRule == 3)
        #expect(harness.tracker.statistics[adapter: "NoEmail"]?.skippedByRule == 1)
    }
}
