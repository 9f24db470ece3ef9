import Foundation
import TouchpointCore
import TouchpointEvents

/// Replays recorded events through the engine's matching and gating, with time taken from the
/// events' timestamps, and reports which survey would be shown when and why the others were
/// not. `touchpoint surveys simulate` prints it.
///
/// ```swift
/// let simulation = SurveySimulator(config: config).run(events)
/// for step in simulation.steps where step.shown != nil { print(step.time, step.shown!) }
/// ```
///
/// It runs the same ``SurveyRuleIndex`` and ``SurveyGate`` as ``SurveyEngine``, from an empty
/// gating history. A shown survey is assumed to be answered `answerAfter` seconds later (at
/// once by default); delays end at the trigger's time plus `delaySeconds`, in time order with
/// the events. Recorded `survey_*` events are replayed like any other event.
public struct SurveySimulator: Sendable {
    /// The config under test.
    public let config: SurveyConfig
    /// How long a shown survey stays on screen, in seconds of event time.
    public let answerAfter: TimeInterval

    /// Creates a simulator.
    /// - Parameters:
    ///   - config: the config under test.
    ///   - answerAfter: seconds a shown survey stays on screen (0: answered at once).
    public init(config: SurveyConfig, answerAfter: TimeInterval = 0) {
        self.config = config
        self.answerAfter = max(0, answerAfter)
    }

    private enum Timer {
        case delayEnds(String)
        case screenClears(String)
    }

    /// Replays events.
    /// - Parameter events: the events, in any order (they are replayed by timestamp, ties in
    ///   the given order).
    /// - Returns: the timeline and the summary.
    public func run(_ events: [Event]) -> SurveySimulation {
        let ordered = events.enumerated().sorted {
            ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset)
        }
        let index = SurveyRuleIndex(config: config)
        var gate = SurveyGate(globalCooldownSeconds: config.globalCooldownSeconds)
        var timers: [(due: Date, order: Int, timer: Timer)] = []
        var timerOrder = 0
        var steps: [SurveySimulation.Step] = []

        func addTimer(_ due: Date, _ timer: Timer) {
            timerOrder += 1
            timers.append((due, timerOrder, timer))
            timers.sort { ($0.due, $0.order) < ($1.due, $1.order) }
        }

        func shown(_ rule: SurveyRule, at time: Date) {
            if answerAfter > 0 {
                addTimer(time.addingTimeInterval(answerAfter), .screenClears(rule.id))
            } else {
                gate.presentationEnded(surveyID: rule.id)
            }
        }

        func runTimers(through time: Date) {
            while let first = timers.first, first.due <= time {
                timers.removeFirst()
                switch first.timer {
                case .screenClears(let id):
                    gate.presentationEnded(surveyID: id)
                case .delayEnds(let id):
                    guard let waiting = gate.pending[id] else { continue }
                    let decision = gate.delayEnded(surveyID: id, rule: config.survey(id: id), now: first.due)
                    var step = SurveySimulation.Step(
                        time: first.due, trigger: .delayEnded(surveyID: id, event: waiting.event),
                        skipped: decision.skipped)
                    if case .present(let rule) = decision.action {
                        step.shown = rule.id
                        shown(rule, at: first.due)
                    }
                    steps.append(step)
                }
            }
        }

        for (_, event) in ordered {
            runTimers(through: event.timestamp)
            guard index.hasRules(forEventNamed: event.name) else { continue }
            let matched = Set(index.matchingRules(for: event))
            let candidates = config.surveys.indices.filter { matched.contains($0) }.map { config.surveys[$0] }
            let decision = gate.evaluate(candidates, event: event, now: event.timestamp)
            var skipped: [SurveyDecision.Skip] = []
            for (position, rule) in config.surveys.enumerated() where rule.trigger.event.name == event.name {
                if matched.contains(position) {
                    skipped += decision.skipped.filter { $0.surveyID == rule.id }
                } else {
                    let detail = rule.trigger.event.mismatch(in: event.properties) ?? "properties differ"
                    skipped.append(.init(surveyID: rule.id, reason: .propertiesDidNotMatch(detail)))
                }
            }
            var step = SurveySimulation.Step(time: event.timestamp, trigger: .event(event), skipped: skipped)
            switch decision.action {
            case .present(let rule):
                step.shown = rule.id
                shown(rule, at: event.timestamp)
            case .schedule(let rule, let due):
                step.scheduled = .init(surveyID: rule.id, at: due)
                addTimer(due, .delayEnds(rule.id))
            case .none:
                break
            }
            steps.append(step)
        }
        runTimers(through: .distantFuture)
        return SurveySimulation(
            steps: steps, eventCount: events.count, summaries: summarize(steps), answerAfter: answerAfter)
    }

    private func summarize(_ steps: [SurveySimulation.Step]) -> [SurveySimulation.Summary] {
        var summaries = config.surveys.map { SurveySimulation.Summary(surveyID: $0.id) }
        let positions = Dictionary(
            config.surveys.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        for step in steps {
            if let id = step.shown, let position = positions[id] { summaries[position].shown += 1 }
            if let id = step.scheduled?.surveyID, let position = positions[id] { summaries[position].scheduled += 1 }
            for skip in step.skipped {
                guard let position = positions[skip.surveyID] else { continue }
                summaries[position].skipped[skip.reason.code, default: 0] += 1
            }
        }
        return summaries
    }
}
