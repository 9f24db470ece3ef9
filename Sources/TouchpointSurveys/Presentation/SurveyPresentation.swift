import Foundation
import TouchpointCore
import TouchpointEvents

/// One survey on screen: what to show, and the one way to end it.
///
/// The engine creates it and hands it to a ``SurveyPresenter``; the presenter renders
/// ``survey`` and reports what the user did through ``choose(_:)``, ``submit(text:)`` or
/// ``dismiss()``. The first of these to succeed ends the presentation; later calls do nothing,
/// so a dismissal after an answer (a sheet closing) records no second event. Validation of
/// text lives here, not in the view:
///
/// ```swift
/// switch presentation.submit(text: editorText) {
/// case .valid: break                           // ended; the engine records survey_response
/// case let problem: showError(problem.message) // still open
/// }
/// ```
public final class SurveyPresentation: Sendable, Identifiable {
    private struct State {
        var outcome: SurveyOutcome?
        var waiters: [CheckedContinuation<SurveyOutcome, Never>] = []
    }

    /// Identifies this presentation (a survey shown twice has two).
    public let id: UUID
    /// The survey to show.
    public let survey: SurveyRule
    /// The event that triggered it, when an engine presented it.
    public let event: Event?
    private let onEnd: @Sendable (SurveyOutcome) -> Void
    private let state = Locked(State())

    /// Creates a presentation (the engine does; presenters' tests may too).
    /// - Parameters:
    ///   - id: identifies the presentation.
    ///   - survey: the survey to show.
    ///   - event: the triggering event.
    ///   - onEnd: called once, synchronously, with the outcome when the presentation ends.
    public init(
        id: UUID = UUID(), survey: SurveyRule, event: Event? = nil,
        onEnd: @escaping @Sendable (SurveyOutcome) -> Void = { _ in }
    ) {
        self.id = id
        self.survey = survey
        self.event = event
        self.onEnd = onEnd
    }

    /// How the presentation ended; nil while it is open.
    public var outcome: SurveyOutcome? { state.withLock { $0.outcome } }

    /// Whether it has ended.
    public var isFinished: Bool { outcome != nil }

    /// The options to show as buttons (empty for a text survey).
    public var options: [String] { survey.response.options ?? [] }

    /// Answers an options survey with one of its options.
    /// - Parameter option: the chosen option, exactly as listed.
    /// - Returns: whether it ended the presentation (false for an unknown option, a text
    ///   survey, or a presentation that has already ended).
    @discardableResult
    public func choose(_ option: String) -> Bool {
        guard let options = survey.response.options, options.contains(option) else { return false }
        return finish(.choice(option))
    }

    /// Checks a text answer without submitting it (for live feedback in an editor).
    /// - Parameter text: the answer as typed.
    /// - Returns: the validation of the trimmed text.
    public func validate(text: String) -> SurveyTextValidation {
        guard let settings = survey.response.text, !isFinished else { return .notAccepted }
        return settings.validate(text)
    }

    /// Submits a text answer: trimmed, validated, and when valid it ends the presentation.
    /// - Parameter text: the answer as typed.
    /// - Returns: ``SurveyTextValidation/valid(_:)`` with the submitted text, or why it was not
    ///   submitted (the presentation stays open).
    @discardableResult
    public func submit(text: String) -> SurveyTextValidation {
        let validation = validate(text: text)
        guard case .valid(let trimmed) = validation else { return validation }
        return finish(.text(trimmed)) ? validation : .notAccepted
    }

    /// Dismisses the survey without an answer; does nothing once it has ended.
    public func dismiss() { _ = finish(.dismissed) }

    /// Waits until the presentation ends.
    /// - Returns: the outcome.
    public func waitForOutcome() async -> SurveyOutcome {
        await withCheckedContinuation { continuation in
            let ended: SurveyOutcome? = state.withLock { state in
                if let outcome = state.outcome { return outcome }
                state.waiters.append(continuation)
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }

    private func finish(_ outcome: SurveyOutcome) -> Bool {
        let waiters: [CheckedContinuation<SurveyOutcome, Never>]? = state.withLock { state in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        guard let waiters else { return false }
        onEnd(outcome)
        for waiter in waiters { waiter.resume(returning: outcome) }
        return true
    }
}
