import Touchpoint

/// The human-readable form of a survey simulation: a timeline, then a table per survey.
enum SurveySimulationText {
    static func render(_ simulation: SurveySimulation, surveys: Int, user: String?) -> String {
        var lines: [String] = []
        let answered =
            simulation.answerAfter > 0
            ? "a shown survey stays on screen for \(simulation.answerAfter) s" : "a shown survey is answered at once"
        let scope = user.map { " of user \($0)" } ?? ""
        lines.append(
            "Replaying \(simulation.eventCount) event\(simulation.eventCount == 1 ? "" : "s")\(scope) through \(surveys) survey\(surveys == 1 ? "" : "s") (\(answered))."
        )
        if simulation.steps.isEmpty { lines.append("No event triggered a survey rule.") }
        for step in simulation.steps {
            lines.append("")
            let event = step.event
            let who = SurveyGate.userKey(for: event.userId)
            switch step.trigger {
            case .event:
                let properties =
                    event.properties.isEmpty
                    ? "" : "  " + JSONValue.object(event.properties).jsonString(sortedKeys: true)
                lines.append("\(Timestamp.format(step.time))  \(who)  \(event.name)\(properties)")
            case .delayEnded(let id, _):
                lines.append("\(Timestamp.format(step.time))  \(who)  (delay of \(id) ended)")
            }
            if let shown = step.shown { lines.append("  shown      \(shown)") }
            if let scheduled = step.scheduled {
                lines.append("  scheduled  \(scheduled.surveyID) for \(Timestamp.format(scheduled.at)) (delaySeconds)")
            }
            for skip in step.skipped { lines.append("  not shown  \(skip.surveyID): \(skip.reason)") }
        }
        lines.append("")
        var table = TextTable("survey", "shown", "scheduled", "not shown")
        for summary in simulation.summaries {
            let reasons = summary.skipped.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
                separator: ", ")
            table.add(summary.surveyID, "\(summary.shown)", "\(summary.scheduled)", reasons.isEmpty ? "-" : reasons)
        }
        lines.append(table.rendered)
        return lines.joined(separator: "\n")
    }
}
