import Foundation
import Testing
import Touchpoint

/// Replaying events through matching and gating with the events' own timestamps.
struct SimulatorTests {
    static func reasons(_ step: SurveySimulation.Step) -> [String] {
        step.skipped.map { "\($0.surveyID): \($0.reason.code)" }
    }

    @Test func theSeedConfigOverADayOfEvents() throws {
        let config = try SurveyConfig.from(json: Fixture.seedJSON)
        let spring: [String: JSONValue] = ["amount": 120, "coupon": "SPRING", "utm": "spring_sale"]
        let events = [
            Fixture.event("checkout_success", spring, at: 0),
            Fixture.event("button_tap", at: 1),
            Fixture.event("checkout_success", ["amount": 40], at: 2),
            Fixture.event("checkout_success", spring, at: 3),
            Fixture.event("checkout_success", spring, session: Fixture.sessionB, at: 3600),
            Fixture.event("checkout_success", spring, session: Fixture.sessionB, at: 90_000),
        ]
        let simulation = SurveySimulator(config: config).run(events.reversed())
        #expect(simulation.eventCount == 6)
        #expect(
            simulation.steps.map(\.event.timestamp)
                == [0, 2, 3, 3600, 90_000].map { Fixture.start.addingTimeInterval($0) })
        #expect(simulation.steps.map(\.shown) == ["ask_rating", nil, "open_feedback", "open_feedback", "ask_rating"])
        #expect(Self.reasons(simulation.steps[0]) == ["open_feedback: preempted"])
        #expect(
            simulation.steps[1].skipped.map(\.reason.description) == [
                "no match: amount 40 is not gt 50", "no match: amount 40 is not gt 100",
            ])
        #expect(Self.reasons(simulation.steps[2]) == ["ask_rating: oncePerSession"])
        #expect(
            simulation.steps[3].skipped.map(\.reason) == [.cooldown(until: Fixture.start.addingTimeInterval(86_400))])
        #expect(Self.reasons(simulation.steps[4]) == ["open_feedback: preempted"])
        #expect(simulation.summaries.map(\.shown) == [2, 2])
        #expect(simulation.summaries[0].skipped == ["noMatch": 1, "oncePerSession": 1, "cooldown": 1])
    }

    @Test func samplingOncePerUserDelayAndTheScreen() {
        let config = SurveyConfig(
            surveys: [
                Fixture.rule("never", on: "a", sampleRate: 0),
                Fixture.rule("once", on: "a", oncePerSession: false, oncePerUser: true),
                Fixture.rule("later", on: "b", oncePerSession: false, delay: 30),
            ], globalCooldownSeconds: nil)
        let events = [
            Fixture.event("a", at: 0), Fixture.event("a", at: 10),
            Fixture.event("b", at: 20), Fixture.event("a", user: "u2", at: 25), Fixture.event("b", at: 100),
        ]
        let simulation = SurveySimulator(config: config, answerAfter: 40).run(events)
        let summary = simulation.steps.map { step -> String in
            let what: String
            switch step.trigger {
            case .event(let event): what = event.name
            case .delayEnded(let id, _): what = "delay:\(id)"
            }
            return
                "\(Int(step.time.timeIntervalSince(Fixture.start))) \(what) shown=\(step.shown ?? "-") scheduled=\(step.scheduled?.surveyID ?? "-") \(Self.reasons(step))"
        }
        #expect(
            summary == [
                "0 a shown=once scheduled=- [\"never: sampling\"]",
                "10 a shown=- scheduled=- [\"never: sampling\", \"once: oncePerUser\"]",
                "20 b shown=- scheduled=- [\"later: surveyOnScreen\"]",
                "25 a shown=- scheduled=- [\"never: sampling\", \"once: surveyOnScreen\"]",
                "100 b shown=- scheduled=later []",
                "130 delay:later shown=later scheduled=- []",
            ])
        #expect(simulation.summaries.map(\.surveyID) == ["never", "once", "later"])
        #expect(simulation.summaries[2].scheduled == 1 && simulation.summaries[2].shown == 1)
    }

    @Test func aPendingDelayEndsAfterTheLastEvent() {
        let config = SurveyConfig(surveys: [Fixture.rule("later", on: "b", delay: 30)], globalCooldownSeconds: 5)
        let simulation = SurveySimulator(config: config).run([Fixture.event("b")])
        #expect(simulation.steps.count == 2)
        #expect(simulation.steps[1].shown == "later")
        let json = simulation.json
        #expect(json["timeline"]?[1]?["kind"] == "delayEnded")
        #expect(json["timeline"]?[0]?["scheduled"]?["id"] == "later")
        #expect(json["summary"]?[0]?["shown"] == 1)
        #expect(json["events"] == 1)
    }
}
