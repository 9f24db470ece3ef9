/// Shows surveys: the SwiftUI sheet (``SurveyPromptModel`` behind `SurveyTriggerView`), the
/// terminal (``TerminalSurveyPresenter``), or a test's scripted user.
///
/// The engine decides what to show and when; a presenter only renders it and reports back
/// through the presentation (``SurveyPresentation/choose(_:)``,
/// ``SurveyPresentation/submit(text:)``, ``SurveyPresentation/dismiss()``). The engine shows
/// one survey at a time and records the `survey_*` events itself.
///
/// ```swift
/// final class LoggingPresenter: SurveyPresenter {
///     func present(_ presentation: SurveyPresentation) {
///         print(presentation.survey.title)
///         presentation.dismiss()
///     }
/// }
/// ```
public protocol SurveyPresenter: AnyObject, Sendable {
    /// Shows a survey. Called from the engine's own task: return promptly (hop to the main
    /// actor or a thread of your own to render), and end the presentation when the user acts.
    func present(_ presentation: SurveyPresentation)
}
