import Foundation
import Touchpoint

/// Answers the demo's surveys: by a seeded random choice, or by asking in the terminal.
///
/// It keeps every presentation so the simulation can wait for the answer before it goes on.
final class DemoSurveyPresenter: SurveyPresenter {
    private struct State {
        var random: SeededRandomNumberGenerator
        var open: [SurveyPresentation] = []
    }

    private let state: Locked<State>
    private let terminal: TerminalSurveyPresenter?

    /// - Parameters:
    ///   - seed: the seed of the random answers.
    ///   - interactive: ask in the terminal instead.
    init(seed: UInt64, interactive: Bool) {
        state = Locked(State(random: SeededRandomNumberGenerator(seed: seed)))
        terminal = interactive ? TerminalSurveyPresenter() : nil
    }

    func present(_ presentation: SurveyPresentation) {
        state.withLock { $0.open.append(presentation) }
        if let terminal { return terminal.present(presentation) }
        let answer: SurveyOutcome = state.withLock { state in
            // One in five dismisses; the others answer.
            if Int.random(in: 0..<5, using: &state.random) == 0 { return .dismissed }
            switch presentation.survey.response {
            case .options(let options):
                // Earlier options are likelier, so the chart has a shape.
                let weights = options.indices.map { options.count - $0 }
                var pick = Int.random(in: 0..<weights.reduce(0, +), using: &state.random)
                for (index, weight) in weights.enumerated() {
                    if pick < weight { return .choice(options[index]) }
                    pick -= weight
                }
                return .choice(options[0])
            case .text:
                return .text(DemoContent.feedback.randomElement(using: &state.random) ?? "Nice.")
            }
        }
        switch answer {
        case .choice(let option): presentation.choose(option)
        case .text(let text): presentation.submit(text: text)
        case .dismissed: presentation.dismiss()
        }
    }

    /// Waits until every survey presented so far has been answered or dismissed.
    func waitForAnswers() async {
        let open = state.withLock { state in
            defer { state.open.removeAll() }
            return state.open
        }
        for presentation in open { _ = await presentation.waitForOutcome() }
    }
}
