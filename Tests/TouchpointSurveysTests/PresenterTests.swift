import Foundation
import Testing
import Touchpoint
import TouchpointTesting

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

/// The terminal presenter with a scripted keyboard, and the SwiftUI view's model.
struct PresenterTests {
    /// Lines to type, and everything the presenter wrote.
    final class Terminal: Sendable {
        private let lines: Locked<[String]>
        let written = Locked("")

        init(_ lines: [String]) { self.lines = Locked(lines) }

        func presenter(attempts: Int = 3) -> TerminalSurveyPresenter {
            TerminalSurveyPresenter(
                input: { [lines] in lines.withLock { $0.isEmpty ? nil : $0.removeFirst() } },
                output: { [written] text in written.withLock { $0 += text } },
                maximumAttempts: attempts)
        }
    }

    @Test func anOptionIsChosenByNumberOrTextAfterInvalidAnswers() {
        let terminal = Terminal(["7", "Great"])
        let presentation = SurveyPresentation(survey: Fixture.rule("rating"))
        terminal.presenter().converse(presentation)
        #expect(presentation.outcome == .choice("Great"))
        let shown = terminal.written.value
        #expect(shown.contains("== Title of rating =="))
        #expect(shown.contains("  2. Okay\n"))
        #expect(shown.contains("Please answer with a number from 1 to 3."))

        let byNumber = SurveyPresentation(survey: Fixture.rule("rating"))
        Terminal([" 3 "]).presenter().converse(byNumber)
        #expect(byNumber.outcome == .choice("Poor"))
    }

    @Test(arguments: [[""], [], ["x", "y"]])
    func emptyLineEndOfInputOrTooManyAttemptsDismiss(_ lines: [String]) {
        let presentation = SurveyPresentation(survey: Fixture.rule("rating"))
        Terminal(lines).presenter(attempts: 2).converse(presentation)
        #expect(presentation.outcome == .dismissed)
    }

    @Test func textIsValidatedAndTrimmed() {
        let rule = Fixture.rule(
            "feedback",
            response: .text(
                SurveyTextResponse(
                    placeholder: "Share your thoughts…", submitLabel: "Send feedback", minLength: 5, maxLength: 20)))
        let terminal = Terminal(["hi", String(repeating: "x", count: 21), "  Great stuff  "])
        let presentation = SurveyPresentation(survey: rule)
        terminal.presenter().converse(presentation)
        #expect(presentation.outcome == .text("Great stuff"))
        let shown = terminal.written.value
        #expect(shown.contains("(Share your thoughts…; 5-20 characters)"))
        #expect(shown.contains("Please write at least 5 characters."))
        #expect(shown.contains("Please shorten your answer to 20 characters (it has 21)."))
        #expect(shown.contains("to send feedback"))
    }

    @Test func anEmptyLineSubmitsOnlyWhereEmptyIsAllowed() {
        let allowed = SurveyPresentation(
            survey: Fixture.rule("t", response: .text(SurveyTextResponse(allowEmpty: true))))
        Terminal(["   "]).presenter().converse(allowed)
        #expect(allowed.outcome == .text(""))
        let refused = SurveyPresentation(survey: Fixture.rule("t", response: .text(SurveyTextResponse())))
        Terminal(["   "]).presenter().converse(refused)
        #expect(refused.outcome == .dismissed)
    }

    @Test func theTerminalPresenterDrivesTheEngineEndToEnd() async throws {
        let fixture = try RecorderFixture()
        let terminal = Terminal(["2"])
        let engine = fixture.engine(
            SurveyConfig(surveys: [Fixture.rule("rating", on: "checkout_success")]), terminal.presenter())
        defer { engine.stop() }
        let events = fixture.recorder.eventStream()
        fixture.recorder.record("checkout_success")
        let response = await withTimeout(60) { await events.first { $0.name == "survey_response" } }
        #expect(response??.properties == ["id": "rating", "type": "choice", "option": "Okay"])
        let thanked = await withTimeout(60) {
            while !terminal.written.value.contains("Thanks! (Okay)") && !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 2_000_000)
            }
            return !Task.isCancelled
        }
        #expect(thanked == true, "\(terminal.written.value)")
    }

    @Test func theSwiftUIModelHoldsTheSurveyOnScreenAndRunsTheEngine() async throws {
        let fixture = try RecorderFixture()
        let model = SurveyPromptModel(notificationQueue: nil)
        let changes = Locked(0)
        let subscription = model.objectWillChange.sink { changes.withLock { $0 += 1 } }
        defer { subscription.cancel() }
        model.start(
            config: SurveyConfig(surveys: [Fixture.rule("rating", on: "a")]), recorder: fixture.recorder,
            options: fixture.engineOptions())
        let engine = try #require(model.engine)
        model.start(config: SurveyConfig(), recorder: fixture.recorder)
        #expect(model.engine === engine, "a second start does nothing")

        fixture.recorder.record("a")
        let current = await withTimeout(60) {
            while model.current == nil && !Task.isCancelled { try? await Task.sleep(nanoseconds: 2_000_000) }
            return model.current
        }
        let presentation = try #require(current ?? nil)
        #expect(presentation.survey.id == "rating")
        #expect(changes.value == 1)

        model.dismissCurrent()
        let cleared = await withTimeout(60) {
            while model.current != nil && !Task.isCancelled { try? await Task.sleep(nanoseconds: 2_000_000) }
            return model.current == nil
        }
        #expect(cleared == true)
        #expect(changes.value == 2)
        await engine.waitUntilIdle()
        #expect(fixture.surveyLog().last == #"survey_dismissed {"id":"rating","responseType":"options"}"#)
        model.stop()
        #expect(model.engine == nil && engine.isStopped)
    }
}
