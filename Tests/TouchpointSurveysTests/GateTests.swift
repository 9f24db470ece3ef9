import Foundation
import Testing
import Touchpoint

/// The gating state machine, driven directly with explicit times.
struct GateTests {
    /// Evaluates one event and ends the presentation at once (the user answers).
    static func show(
        _ gate: inout SurveyGate, _ rules: [SurveyRule], _ event: Event, keepOnScreen: Bool = false
    ) -> SurveyDecision {
        let decision = gate.evaluate(rules, event: event, now: event.timestamp)
        if case .present(let rule) = decision.action, !keepOnScreen { gate.presentationEnded(surveyID: rule.id) }
        return decision
    }

    @Test func theFirstEligibleRuleWinsAndTheOthersArePreempted() {
        var gate = SurveyGate()
        let rules = [Fixture.rule("a"), Fixture.rule("b"), Fixture.rule("c")]
        let decision = Self.show(&gate, rules, Fixture.event("checkout_success"))
        #expect(decision.action == .present(rules[0]))
        #expect(
            decision.skipped == [
                .init(surveyID: "b", reason: .preempted(by: "a")), .init(surveyID: "c", reason: .preempted(by: "a")),
            ])
        let next = Self.show(&gate, rules, Fixture.event("checkout_success", at: 1))
        #expect(next.action == .present(rules[1]), "a was shown this session, so b is the first eligible")
        #expect(next.skipped.first == .init(surveyID: "a", reason: .shownThisSession))
    }

    @Test func oncePerSessionAllowsTheNextSession() {
        var gate = SurveyGate()
        let rule = Fixture.rule("a")
        #expect(Self.show(&gate, [rule], Fixture.event("checkout_success")).action == .present(rule))
        #expect(
            Self.show(&gate, [rule], Fixture.event("checkout_success", at: 60)).skipped.map(\.reason) == [
                .shownThisSession
            ])
        #expect(
            Self.show(&gate, [rule], Fixture.event("checkout_success", session: Fixture.sessionB, at: 120)).action
                == .present(rule))
        #expect(gate.history(for: "u1").surveys["a"]?.presentations == 2)
    }

    @Test func notOncePerSessionShowsAgainInTheSameSession() {
        var gate = SurveyGate()
        let rule = Fixture.rule("a", oncePerSession: false)
        #expect(Self.show(&gate, [rule], Fixture.event("checkout_success")).action == .present(rule))
        #expect(Self.show(&gate, [rule], Fixture.event("checkout_success", at: 1)).action == .present(rule))
    }

    @Test func oncePerUserWinsOverTheCooldown() {
        var gate = SurveyGate()
        let rule = Fixture.rule("a", oncePerSession: false, oncePerUser: true, cooldown: 10)
        #expect(Self.show(&gate, [rule], Fixture.event("checkout_success")).action == .present(rule))
        let later = Self.show(
            &gate, [rule], Fixture.event("checkout_success", session: Fixture.sessionB, at: 1_000_000))
        #expect(later.skipped.map(\.reason) == [.shownToUser], "the cooldown has passed, once-per-user still blocks")
        let otherUser = Self.show(&gate, [rule], Fixture.event("checkout_success", user: "u2", at: 1_000_001))
        #expect(otherUser.action == .present(rule))
    }

    @Test func cooldownCountsPerUserAndEnds() {
        var gate = SurveyGate()
        let rule = Fixture.rule("a", oncePerSession: false, cooldown: 3600)
        #expect(Self.show(&gate, [rule], Fixture.event("checkout_success")).action == .present(rule))
        let soon = Self.show(&gate, [rule], Fixture.event("checkout_success", at: 3599))
        #expect(soon.skipped.map(\.reason) == [.cooldown(until: Fixture.start.addingTimeInterval(3600))])
        #expect(Self.show(&gate, [rule], Fixture.event("checkout_success", user: nil, at: 10)).action == .present(rule))
        #expect(Self.show(&gate, [rule], Fixture.event("checkout_success", at: 3600)).action == .present(rule))
    }

    @Test func theGlobalCooldownSpansSurveys() {
        var gate = SurveyGate(globalCooldownSeconds: 600)
        let a = Fixture.rule("a")
        let b = Fixture.rule("b", on: "signup")
        #expect(Self.show(&gate, [a], Fixture.event("checkout_success")).action == .present(a))
        let blocked = Self.show(&gate, [b], Fixture.event("signup", at: 599))
        #expect(blocked.skipped.map(\.reason) == [.globalCooldown(until: Fixture.start.addingTimeInterval(600))])
        #expect(Self.show(&gate, [b], Fixture.event("signup", user: "u2", at: 599)).action == .present(b))
        #expect(Self.show(&gate, [b], Fixture.event("signup", at: 600)).action == .present(b))
    }

    @Test func onlyOneSurveyIsOnScreen() {
        var gate = SurveyGate()
        let a = Fixture.rule("a")
        let b = Fixture.rule("b", on: "signup")
        #expect(Self.show(&gate, [a], Fixture.event("checkout_success"), keepOnScreen: true).action == .present(a))
        #expect(gate.onScreen?.surveyID == "a")
        let second = Self.show(&gate, [b], Fixture.event("signup", user: "u2", at: 1))
        #expect(second.skipped.map(\.reason) == [.surveyOnScreen("a")], "even for another user: there is one screen")
        gate.presentationEnded(surveyID: "b")
        #expect(gate.onScreen?.surveyID == "a", "ending another survey does not clear the screen")
        gate.presentationEnded(surveyID: "a")
        #expect(Self.show(&gate, [b], Fixture.event("signup", user: "u2", at: 2)).action == .present(b))
    }

    @Test func samplingIsStickyPerUserAndFollowsTheRate() {
        let rule = Fixture.rule("sampled", oncePerSession: false, sampleRate: 0.3)
        var included = 0
        for user in 0..<2000 {
            let key = "user-\(user)"
            var gate = SurveyGate()
            let first = Self.show(&gate, [rule], Fixture.event("checkout_success", user: key))
            let again = Self.show(&gate, [rule], Fixture.event("checkout_success", user: key, at: 5))
            #expect((first.action == .present(rule)) == (again.action == .present(rule)), "sticky for \(key)")
            let expected = StableHash.unitInterval("sampled:\(key)") < 0.3
            #expect((first.action == .present(rule)) == expected)
            if first.action == .present(rule) {
                included += 1
            } else {
                #expect(first.skipped.map(\.reason) == [.sampledOut(rate: 0.3)])
            }
        }
        #expect((500...700).contains(included), "about 30% of 2,000 users: \(included)")
        var gate = SurveyGate()
        #expect(
            Self.show(&gate, [Fixture.rule("none", sampleRate: 0)], Fixture.event("checkout_success")).action == .none)
        #expect(
            Self.show(&gate, [Fixture.rule("all", sampleRate: 1)], Fixture.event("checkout_success")).action != .none)
    }

    @Test func aDelayIsScheduledAndEligibilityCheckedAgainWhenItEnds() {
        var gate = SurveyGate()
        let delayed = Fixture.rule("delayed", delay: 30)
        let other = Fixture.rule("other", on: "signup")
        let trigger = Fixture.event("checkout_success")
        let decision = gate.evaluate([delayed], event: trigger, now: trigger.timestamp)
        let due = Fixture.start.addingTimeInterval(30)
        #expect(decision.action == .schedule(delayed, at: due))
        #expect(gate.pending["delayed"]?.due == due)
        #expect(gate.onScreen == nil, "a pending delay does not occupy the screen")

        let again = gate.evaluate(
            [delayed], event: Fixture.event("checkout_success", at: 5), now: Fixture.start.addingTimeInterval(5))
        #expect(again.skipped.map(\.reason) == [.delayPending(until: due)])

        // Another survey comes on screen meanwhile: when the delay ends, the delayed one is skipped.
        #expect(
            Self.show(&gate, [other], Fixture.event("signup", at: 10), keepOnScreen: true).action == .present(other))
        let ended = gate.delayEnded(surveyID: "delayed", rule: delayed, now: due)
        #expect(ended.action == .none)
        #expect(ended.skipped.map(\.reason) == [.surveyOnScreen("other")])
        #expect(gate.pending.isEmpty)
        #expect(gate.history(for: "u1").surveys["delayed"] == nil, "never presented")
    }

    @Test func aDelayThatEndsCleanlyPresents() {
        var gate = SurveyGate()
        let delayed = Fixture.rule("delayed", delay: 30)
        let trigger = Fixture.event("checkout_success")
        _ = gate.evaluate([delayed], event: trigger, now: trigger.timestamp)
        let ended = gate.delayEnded(surveyID: "delayed", rule: delayed, now: Fixture.start.addingTimeInterval(30))
        #expect(ended.action == .present(delayed))
        #expect(gate.onScreen?.event == trigger)
        #expect(gate.history(for: "u1").surveys["delayed"]?.lastPresentedAt == Fixture.start.addingTimeInterval(30))
        #expect(
            gate.delayEnded(surveyID: "delayed", rule: delayed, now: Fixture.start).action == .none, "nothing pending")
        var removed = SurveyGate()
        _ = removed.evaluate([delayed], event: trigger, now: trigger.timestamp)
        #expect(
            removed.delayEnded(surveyID: "delayed", rule: nil, now: Fixture.start).skipped.map(\.reason) == [
                .removedFromConfig
            ])
    }

    @Test func anonymousUsersShareTheAnonKey() {
        #expect(SurveyGate.userKey(for: nil) == "anon")
        #expect(SurveyGate.userKey(for: "") == "anon")
        #expect(SurveyGate.userKey(for: "u1") == "u1")
        var gate = SurveyGate()
        let rule = Fixture.rule("a", oncePerUser: true)
        _ = Self.show(&gate, [rule], Fixture.event("checkout_success", user: nil))
        #expect(gate.history(for: "anon").surveys["a"]?.presentations == 1)
        #expect(
            Self.show(&gate, [rule], Fixture.event("checkout_success", user: nil, session: Fixture.sessionB)).action
                == .none)
    }

    @Test func historiesRoundTripThroughJSON() throws {
        var history = SurveyUserHistory(userKey: "u/1")
        history.notePresentation(of: "a", sessionId: Fixture.sessionA, at: Fixture.start)
        history.notePresentation(of: "a", sessionId: Fixture.sessionB, at: Fixture.start.addingTimeInterval(5))
        history.notePresentation(of: "b", sessionId: Fixture.sessionB, at: Fixture.start.addingTimeInterval(2))
        #expect(try SurveyUserHistory(json: history.json) == history)
        #expect(history.lastPresentedAt == Fixture.start.addingTimeInterval(5))
        #expect(
            history.surveys["a"]
                == .init(
                    presentations: 2, lastPresentedAt: Fixture.start.addingTimeInterval(5),
                    lastSessionId: Fixture.sessionB))
        #expect(throws: JSONProblem.self) { try SurveyUserHistory(json: ["version": 2, "user": "x", "surveys": [:]]) }
        let problem = #expect(throws: JSONProblem.self) {
            try SurveyUserHistory(json: ["version": 1, "user": "x", "surveys": ["a": ["presentations": "many"]]])
        }
        #expect(problem?.description == "surveys.a.presentations: expected a count")
    }
}
