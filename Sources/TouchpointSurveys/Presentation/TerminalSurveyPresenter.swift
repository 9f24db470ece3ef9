import Foundation

/// Shows surveys in a terminal and reads the answer from standard input: the presenter of
/// `touchpoint` demos and of command-line apps.
///
/// ```
/// == Quick question ==
/// How would you rate your experience?
///   1. Great
///   2. Okay
///   3. Poor
/// Choose 1-3 (empty line to dismiss):
/// ```
///
/// An options survey takes a number or the option's text; a text survey takes one line,
/// validated like every text answer (trimmed, then `minLength`/`maxLength`/`allowEmpty`). An
/// empty line dismisses (or submits an empty answer where `allowEmpty` is true), and so does
/// the end of input or `maximumAttempts` invalid answers in a row.
public final class TerminalSurveyPresenter: SurveyPresenter {
    /// Reads one line, without its newline; nil at the end of input.
    public typealias ReadLine = @Sendable () -> String?
    /// Writes text as it is (the presenter adds its own newlines).
    public typealias Write = @Sendable (String) -> Void

    private let input: ReadLine
    private let output: Write
    private let maximumAttempts: Int

    /// Creates a presenter.
    /// - Parameters:
    ///   - input: reads a line (standard input by default).
    ///   - output: writes text (standard output by default).
    ///   - maximumAttempts: invalid answers accepted in a row before the survey is dismissed.
    public init(
        input: @escaping ReadLine = { Swift.readLine(strippingNewline: true) },
        output: @escaping Write = { FileHandle.standardOutput.write(Data($0.utf8)) },
        maximumAttempts: Int = 3
    ) {
        self.input = input
        self.output = output
        self.maximumAttempts = max(1, maximumAttempts)
    }

    /// Runs the dialog on a thread of its own (reading standard input blocks).
    public func present(_ presentation: SurveyPresentation) {
        Thread.detachNewThread { self.converse(presentation) }
    }

    /// Runs the dialog on the calling thread until the presentation ends.
    /// - Parameter presentation: the survey to ask.
    public func converse(_ presentation: SurveyPresentation) {
        let survey = presentation.survey
        output("\n== \(survey.title) ==\n")
        if !survey.message.isEmpty { output(survey.message + "\n") }
        switch survey.response {
        case .options(let options):
            for (number, option) in options.enumerated() { output("  \(number + 1). \(option)\n") }
            askForChoice(presentation, options: options)
        case .text(let settings):
            var hints: [String] = []
            if let placeholder = settings.placeholder, !placeholder.isEmpty { hints.append(placeholder) }
            switch (settings.minLength, settings.maxLength) {
            case (let min?, let max?): hints.append("\(min)-\(max) characters")
            case (let min?, nil): hints.append("at least \(min) characters")
            case (nil, let max?): hints.append("at most \(max) characters")
            case (nil, nil): break
            }
            if !hints.isEmpty { output("(\(hints.joined(separator: "; ")))\n") }
            askForText(presentation, allowEmpty: settings.allowEmpty, label: settings.submitLabel)
        }
        if let outcome = presentation.outcome { output(Self.describe(outcome) + "\n") }
    }

    private func askForChoice(_ presentation: SurveyPresentation, options: [String]) {
        for _ in 0..<maximumAttempts {
            output("Choose 1-\(options.count) (empty line to dismiss): ")
            guard let line = input()?.trimmingCharacters(in: .whitespaces), !line.isEmpty else {
                return presentation.dismiss()
            }
            if let number = Int(line), options.indices.contains(number - 1) {
                presentation.choose(options[number - 1])
                return
            }
            if presentation.choose(line) { return }
            output("Please answer with a number from 1 to \(options.count).\n")
        }
        presentation.dismiss()
    }

    private func askForText(_ presentation: SurveyPresentation, allowEmpty: Bool, label: String?) {
        let action = label.map { " and press Enter to \($0.lowercased())" } ?? " and press Enter"
        let empty = allowEmpty ? "an empty line sends no text; end of input dismisses" : "empty line to dismiss"
        for _ in 0..<maximumAttempts {
            output("Type your answer\(action) (\(empty)): ")
            guard let line = input() else { return presentation.dismiss() }
            if line.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty && !allowEmpty {
                return presentation.dismiss()
            }
            let validation = presentation.submit(text: line)
            if validation.isValid { return }
            output((validation.message ?? "That answer cannot be sent.") + "\n")
        }
        presentation.dismiss()
    }

    private static func describe(_ outcome: SurveyOutcome) -> String {
        switch outcome {
        case .choice(let option): return "Thanks! (\(option))"
        case .text: return "Thanks for your feedback!"
        case .dismissed: return "(dismissed)"
        }
    }
}
