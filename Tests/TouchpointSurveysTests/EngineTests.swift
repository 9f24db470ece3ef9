import Foundation
import Testing
import Touchpoint
import TouchpointTesting

/// The engine end to end: a real recorder in a temporary directory, a scripted user, and the
/// survey events read back from the log on disk.
struct EngineTests {
    static let seedConfig: SurveyConfig = {
        // Built in code so the suite does not depend on the fixture for these cases.
        let rating = SurveyRule(
            id: "ask_rating", title: "Quick question", message: "How would you rate your experience?",
            response: .options(["Great", "Okay", "Poor"]),
            trigger: TriggerCondition(
                event: EventTrigger(
                    name: "checkout_success",
                    properties: [
                        "amount": PropertyMatcher(.gt, 50), "coupon": .exists,
                        "utm": PropertyMatcher(.contains, "spring"),
                    ])),
            cooldownSeconds: 86_400)
        let feedback = SurveyRule(
            id: "open_feedback", title: "We'd love your feedback", message: "Tell us…",
            response: .text(SurveyTextResponse(placeholder: "Share your thoughts…", minLength: 5, maxLength: 500)),
            trigger: TriggerCondition(
                event: EventTrigger(name: "checkout_success", properties: ["amount": PropertyMatcher(.gt, 100)])))
        return SurveyConfig(surveys: [rating, feedback])
    }()

    @Test func aMatchingEventIsPresentedAndTheAnswerRecorded() async throws {
        let fixture = try RecorderFixture()
        let presenter = ScriptedPresenter()
        let engine = fixture.engine(Self.seedConfig, presenter)
        defer { engine.stop() }
        await fixture.recorder.startSession(userID: "u1")
        fixture.recorder.record("button_tap")
        fixture.recorder.record(
            "checkout_success", properties: ["amount": 120, "coupon": "SPRING", "utm": "spring_sale"])
        let presentation = try #require(await presenter.next())
        #expect(presentation.survey.id == "ask_rating", "the first matching rule in order")
        #expect(presentation.event?.name == "checkout_success")
        #expect(engine.currentPresentation === presentation)
        #expect(presentation.choose("Great"))
        await engine.waitUntilIdle()
        #expect(engine.currentPresentation == nil)
        #expect(
            fixture.log() == [
                "button_tap {}",
                #"checkout_success {"amount":120,"coupon":"SPRING","utm":"spring_sale"}"#,
                #"survey_presented {"id":"ask_rating","responseType":"options"}"#,
                #"survey_response {"id":"ask_rating","option":"Great","type":"choice"}"#,
            ])
        // The same session again: once per session.
        fixture.recorder.record("checkout_success", properties: ["amount": 60, "coupon": "X", "utm": "spring"])
        await engine.waitUntilIdle()
        #expect(presenter.shown.value == ["ask_rating"])
    }

    @Test func aTextAnswerIsTrimmedAndADismissalRecordedOnce() async throws {
        let fixture = try RecorderFixture()
        let presenter = ScriptedPresenter()
        let config = SurveyConfig(surveys: [Self.seedConfig.surveys[1]])
        let engine = fixture.engine(config, presenter)
        defer { engine.stop() }
        await fixture.recorder.startSession(userID: "u1")
        fixture.recorder.record("checkout_success", properties: ["amount": 150])
        let first = try #require(await presenter.next())
        #expect(first.submit(text: "meh") == .tooShort(minimum: 5, length: 3))
        #expect(first.submit(text: "   Fast checkout!  \n") == .valid("Fast checkout!"))
        first.dismiss()  // the sheet closing after the answer: no second event
        await engine.waitUntilIdle()

        fixture.clock.advance(by: 60)
        await fixture.recorder.startSession(userID: "u1")
        fixture.recorder.record("checkout_success", properties: ["amount": 150])
        let second = try #require(await presenter.next())
        second.dismiss()
        second.dismiss()
        #expect(second.submit(text: "too late, dismissed") == .notAccepted)
        await engine.waitUntilIdle()
        #expect(
            fixture.surveyLog() == [
                #"survey_presented {"id":"open_feedback","responseType":"text"}"#,
                #"survey_response {"id":"open_feedback","text":"Fast checkout!","type":"text"}"#,
                #"survey_presented {"id":"open_feedback","responseType":"text"}"#,
                #"survey_dismissed {"id":"open_feedback","responseType":"text"}"#,
            ])
    }

    @Test func onlyOneSurveyIsOnScreenAtATime() async throws {
        let fixture = try RecorderFixture()
        let presenter = ScriptedPresenter()
        let config = SurveyConfig(surveys: [
            Fixture.rule("first", on: "a"), Fixture.rule("second", on: "b"),
        ])
        let engine = fixture.engine(config, presenter)
        defer { engine.stop() }
        fixture.recorder.record("a")
        let first = try #require(await presenter.next())
        fixture.recorder.record("b")
        await engine.waitUntilIdle()
        #expect(presenter.shown.value == ["first"], "b fired while first was on screen")
        first.dismiss()
        fixture.recorder.record("b")
        let second = try #require(await presenter.next())
        #expect(second.survey.id == "second")
        second.choose("Okay")
        await engine.waitUntilIdle()
        #expect(fixture.surveyLog().count == 4)
    }

    @Test func gatingSurvivesARestart() async throws {
        let fixture = try RecorderFixture()
        let config = SurveyConfig(surveys: [Fixture.rule("once", on: "done", oncePerUser: true)])
        do {
            let presenter = ScriptedPresenter()
            let engine = fixture.engine(config, presenter)
            await fixture.recorder.startSession(userID: "u1")
            fixture.recorder.record("done")
            try #require(await presenter.next()).choose("Great")
            await engine.waitUntilIdle()
            engine.stop()
        }
        let stored = try #require(
            FileManager.default.contents(atPath: fixture.directory.path + "/state/surveys/u1.json"))
        #expect(try SurveyUserHistory(json: JSONParser.parse(Array(stored))).surveys["once"]?.presentations == 1)

        let relaunched = RecorderFixture(directory: fixture.directory, clock: fixture.clock)
        let presenter = ScriptedPresenter()
        let engine = relaunched.engine(config, presenter)
        defer { engine.stop() }
        await relaunched.recorder.startSession(userID: "u1")
        relaunched.recorder.record("done")
        await relaunched.recorder.startSession(userID: "u2")
        relaunched.recorder.record("done")
        let other = try #require(await presenter.next())
        #expect(other.event?.userId == "u2", "u1 saw it before the restart; u2 has not")
        other.dismiss()
        await engine.waitUntilIdle()
        #expect(presenter.shown.value == ["once"])
    }

    @Test func aCorruptGatingFileIsReportedAndIgnored() async throws {
        let fixture = try RecorderFixture()
        let path = fixture.directory.path + "/state/surveys/u1.json"
        try FileManager.default.createDirectory(
            atPath: fixture.directory.path + "/state/surveys", withIntermediateDirectories: true)
        try Data("{\"version\": 1, \"surveys\": tru".utf8).write(to: URL(fileURLWithPath: path))
        let presenter = ScriptedPresenter()
        let engine = fixture.engine(SurveyConfig(surveys: [Fixture.rule("s", on: "done")]), presenter)
        defer { engine.stop() }
        await fixture.recorder.startSession(userID: "u1")
        fixture.recorder.record("done")
        let presentation = try #require(await presenter.next())
        presentation.dismiss()
        await engine.waitUntilIdle()
        #expect(engine.stateErrors.map(\.code) == [.corrupt])
        #expect(engine.stateErrors.first?.path == path)
        let rewritten = try #require(FileManager.default.contents(atPath: path))
        #expect(try SurveyUserHistory(json: JSONParser.parse(Array(rewritten))).surveys["s"]?.presentations == 1)
    }

    @Test func aDelayEndsWithEligibilityCheckedAgain() async throws {
        let fixture = try RecorderFixture()
        let presenter = ScriptedPresenter()
        let wait = ManualWait()
        let config = SurveyConfig(surveys: [
            Fixture.rule("later", on: "a", delay: 30), Fixture.rule("now", on: "b"),
        ])
        let engine = fixture.engine(config, presenter, wait: wait.wait)
        defer { engine.stop() }
        fixture.recorder.record("a")
        #expect(await wait.waitForRequests(1))
        #expect(wait.requests == [30])
        #expect(engine.gate.pending["later"] != nil)

        // A survey is on screen when the delay ends: the delayed one is not shown.
        fixture.recorder.record("b")
        let now = try #require(await presenter.next())
        fixture.clock.advance(by: 30)
        #expect(wait.releaseAll() == 1)
        // The released delay posts its end to the engine on its own task: wait for it to be
        // handled (a barrier posted now could overtake it), then for anything it started.
        #expect(await eventually { engine.gate.pending.isEmpty })
        await engine.waitUntilIdle()
        #expect(presenter.shown.value == ["now"])
        now.dismiss()

        // Again, with nothing in the way: shown when the delay ends.
        await fixture.recorder.startSession()
        fixture.recorder.record("a")
        #expect(await wait.waitForRequests(2))
        #expect(presenter.shown.value == ["now"], "not before the delay ends")
        fixture.clock.advance(by: 30)
        wait.releaseAll()
        let later = try #require(await presenter.next())
        #expect(later.survey.id == "later")
        later.choose("Poor")
        await engine.waitUntilIdle()
        #expect(
            fixture.surveyLog().suffix(2) == [
                #"survey_presented {"id":"later","responseType":"options"}"#,
                #"survey_response {"id":"later","option":"Poor","type":"choice"}"#,
            ])
    }

    @Test func aNewConfigReplacesTheRulesLive() async throws {
        let fixture = try RecorderFixture()
        let presenter = ScriptedPresenter()
        let engine = fixture.engine(SurveyConfig(surveys: [Fixture.rule("old", on: "a")]), presenter)
        defer { engine.stop() }
        engine.update(config: SurveyConfig(surveys: [Fixture.rule("new", on: "b")]))
        fixture.recorder.record("a")
        fixture.recorder.record("b")
        let shown = try #require(await presenter.next())
        #expect(shown.survey.id == "new")
        #expect(engine.config.surveys.map(\.id) == ["new"])
        shown.dismiss()
        await engine.waitUntilIdle()
        #expect(presenter.shown.value == ["new"])
    }

    @Test func aConfigWithOneMalformedSurveyKeepsTheOthersWorking() async throws {
        let fixture = try RecorderFixture()
        let presenter = ScriptedPresenter()
        let load = SurveyConfig.load(json: [
            "surveys": [
                [
                    "id": "broken", "title": "T", "message": "M", "options": ["A"],
                    "trigger": ["event": ["name": "a", "properties": ["n": ["op": "gtt", "value": 1]]]],
                ],
                ["id": "fine", "title": "T", "message": "M", "options": ["A"], "trigger": ["event": ["name": "a"]]],
            ]
        ])
        #expect(load.rejectedSurveys.map(\.id) == ["broken"])
        let engine = fixture.engine(load.config, presenter)
        defer { engine.stop() }
        fixture.recorder.record("a", properties: ["n": 5])
        let shown = try #require(await presenter.next())
        #expect(shown.survey.id == "fine")
        shown.choose("A")
        await engine.waitUntilIdle()
    }

    @Test func stoppingDismissesTheSurveyOnScreenAndStopsWatching() async throws {
        let fixture = try RecorderFixture()
        let presenter = ScriptedPresenter()
        let engine = fixture.engine(
            SurveyConfig(surveys: [Fixture.rule("s", on: "a", oncePerSession: false)]), presenter)
        fixture.recorder.record("a")
        let shown = try #require(await presenter.next())
        engine.stop()
        #expect(shown.outcome == .dismissed)
        #expect(engine.isStopped)
        fixture.recorder.record("a")
        await engine.waitUntilIdle()
        #expect(presenter.shown.value == ["s"])
        #expect(
            fixture.surveyLog() == [
                #"survey_presented {"id":"s","responseType":"options"}"#,
                #"survey_dismissed {"id":"s","responseType":"options"}"#,
            ])
    }

    @Test func aRuleOnTheEnginesOwnEventsChainsSurveys() async throws {
        let fixture = try RecorderFixture()
        let presenter = ScriptedPresenter()
        let config = SurveyConfig(surveys: [
            Fixture.rule("rating", on: "checkout_success"),
            Fixture.rule(
                "why", on: "survey_response", properties: ["option": .equals("Poor")],
                response: .text(SurveyTextResponse())),
        ])
        let engine = fixture.engine(config, presenter)
        defer { engine.stop() }
        fixture.recorder.record("checkout_success")
        try #require(await presenter.next()).choose("Poor")
        let followUp = try #require(await presenter.next())
        #expect(followUp.survey.id == "why")
        followUp.submit(text: "slow")
        await engine.waitUntilIdle()
        #expect(fixture.surveyLog().last == #"survey_response {"id":"why","text":"slow","type":"text"}"#)
    }
}
