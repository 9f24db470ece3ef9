import Testing
import Touchpoint

/// Text answers: trimmed first, then checked against allowEmpty, minLength and maxLength.
struct TextValidationTests {
    static let cases: [(SurveyTextResponse, String, SurveyTextValidation)] = [
        (SurveyTextResponse(), "  hello \n", .valid("hello")),
        (SurveyTextResponse(), "", .empty),
        (SurveyTextResponse(), " \n\t ", .empty),
        (SurveyTextResponse(allowEmpty: true), " \n ", .valid("")),
        (SurveyTextResponse(minLength: 5), "  abcd  ", .tooShort(minimum: 5, length: 4)),
        (SurveyTextResponse(minLength: 5), "abcde", .valid("abcde")),
        (SurveyTextResponse(minLength: 5, maxLength: 6), "  abcdefg ", .tooLong(maximum: 6, length: 7)),
        (SurveyTextResponse(maxLength: 6), "abcdef\n", .valid("abcdef")),
        (SurveyTextResponse(allowEmpty: true, minLength: 3), "", .valid("")),
        (SurveyTextResponse(allowEmpty: true, minLength: 3), "ab", .tooShort(minimum: 3, length: 2)),
        // Characters as a reader counts them: one accented letter, one skin-toned emoji.
        (SurveyTextResponse(maxLength: 2), "e\u{301}👍🏽", .valid("e\u{301}👍🏽")),
        (SurveyTextResponse(minLength: 3), "e\u{301}👍🏽", .tooShort(minimum: 3, length: 2)),
        (SurveyTextResponse(minLength: 1), "  inner  space  ", .valid("inner  space")),
    ]

    @Test(arguments: cases.indices)
    func trimmedThenChecked(_ index: Int) {
        let (settings, text, expected) = Self.cases[index]
        #expect(settings.validate(text) == expected)
    }

    @Test func messagesSayWhatToDo() {
        #expect(SurveyTextValidation.tooShort(minimum: 5, length: 2).message == "Please write at least 5 characters.")
        #expect(SurveyTextValidation.tooShort(minimum: 1, length: 0).message == "Please write at least 1 character.")
        #expect(
            SurveyTextValidation.tooLong(maximum: 500, length: 512).message
                == "Please shorten your answer to 500 characters (it has 512).")
        #expect(SurveyTextValidation.empty.message == "Please write an answer.")
        #expect(SurveyTextValidation.valid("x").message == nil)
    }

    @Test func aPresentationSubmitsOnlyValidTrimmedTextAndEndsOnce() {
        let ended = Locked<[SurveyOutcome]>([])
        let rule = Fixture.rule("feedback", response: .text(SurveyTextResponse(minLength: 5, maxLength: 10)))
        let presentation = SurveyPresentation(survey: rule) { outcome in ended.withLock { $0.append(outcome) } }
        #expect(presentation.submit(text: " hi ") == .tooShort(minimum: 5, length: 2))
        #expect(!presentation.isFinished)
        #expect(presentation.choose("Great") == false, "not an options survey")
        #expect(presentation.submit(text: "  great app \n") == .valid("great app"))
        #expect(presentation.outcome == .text("great app"))
        presentation.dismiss()
        #expect(presentation.submit(text: "another one") == .notAccepted)
        #expect(ended.value == [.text("great app")], "ended once: no dismissal after the answer")
    }

    @Test func aChoiceMustBeOneOfTheOptions() {
        let presentation = SurveyPresentation(survey: Fixture.rule("rating"))
        #expect(presentation.choose("Excellent") == false)
        #expect(presentation.validate(text: "anything") == .notAccepted)
        #expect(presentation.choose("Okay"))
        #expect(presentation.outcome == .choice("Okay"))
        #expect(presentation.choose("Great") == false)
    }
}
