import Foundation
import Logging
import TouchpointCore
import TouchpointEvents

extension SurveyEngine {
    /// Handles one message on the engine's task; messages are handled one at a time, in order.
    func handle(_ message: Message) {
        switch message {
        case .trigger(let event, let rules):
            ensureHistory(of: SurveyGate.userKey(for: event.userId))
            let now = options.clock.now()
            let decision: SurveyDecision? = state.withLock { state in
                guard !state.stopped else { return nil }
                // Rules the config lost since the event was matched are not shown.
                let current = rules.filter { state.config.survey(id: $0.id) == $0 }
                return state.gate.evaluate(current, event: event, now: now)
            }
            if let decision { apply(decision, trigger: event.name, now: now) }
        case .delayEnded(let surveyID):
            let now = options.clock.now()
            let decision: SurveyDecision? = state.withLock { state in
                guard !state.stopped else { return nil }
                state.delays[surveyID] = nil
                return state.gate.delayEnded(surveyID: surveyID, rule: state.config.survey(id: surveyID), now: now)
            }
            if let decision { apply(decision, trigger: "delay of \(surveyID)", now: now) }
        case .ended(let id, let outcome):
            let ended: SurveyPresentation? = state.withLock { state in
                guard let current = state.current, current.id == id else { return nil }
                state.current = nil
                state.gate.presentationEnded(surveyID: current.survey.id)
                return current
            }
            if let ended { recordOutcome(outcome, of: ended.survey) }
        case .barrier(let continuation):
            continuation.resume()
        }
    }

    private func apply(_ decision: SurveyDecision, trigger: String, now: Date) {
        for skip in decision.skipped {
            options.logger.debug(
                "survey not shown: \(skip.reason)", metadata: ["survey": "\(skip.surveyID)", "trigger": "\(trigger)"])
        }
        switch decision.action {
        case .none:
            return
        case .schedule(let rule, let due):
            let inbox = self.inbox
            let wait = options.wait
            let delay = due.timeIntervalSince(now)
            let task = Task {
                await wait(delay)
                inbox.yield(.delayEnded(rule.id))
            }
            state.withLock { $0.delays[rule.id] = task }
        case .present(let rule):
            present(rule)
        }
    }

    private func present(_ rule: SurveyRule) {
        let inbox = self.inbox
        let (presentation, history): (SurveyPresentation?, SurveyUserHistory?) = state.withLock { state in
            guard !state.stopped, let onScreen = state.gate.onScreen, onScreen.surveyID == rule.id else {
                return (nil, nil)
            }
            let id = UUID()
            let presentation = SurveyPresentation(id: id, survey: rule, event: onScreen.event) { outcome in
                inbox.yield(.ended(id, outcome))
            }
            state.current = presentation
            return (presentation, state.gate.history(for: SurveyGate.userKey(for: onScreen.event.userId)))
        }
        guard let presentation, let history else { return }
        do {
            try store.save(history)
        } catch {
            note(error)
        }
        options.logger.info("presenting survey", metadata: ["survey": "\(rule.id)", "user": "\(history.userKey)"])
        recorder.record(
            "survey_presented", properties: ["id": .string(rule.id), "responseType": .string(rule.responseType)])
        presenter.present(presentation)
    }

    /// Records how a presentation ended: `survey_response` or `survey_dismissed`.
    func recordOutcome(_ outcome: SurveyOutcome, of rule: SurveyRule) {
        switch outcome {
        case .choice(let option):
            recorder.record(
                "survey_response", properties: ["id": .string(rule.id), "type": "choice", "option": .string(option)])
        case .text(let text):
            recorder.record(
                "survey_response", properties: ["id": .string(rule.id), "type": "text", "text": .string(text)])
        case .dismissed:
            recorder.record(
                "survey_dismissed", properties: ["id": .string(rule.id), "responseType": .string(rule.responseType)])
        }
    }

    /// Loads a user's gating history from disk the first time the user is seen.
    private func ensureHistory(of userKey: String) {
        guard state.withLock({ !$0.gate.hasHistory(for: userKey) }) else { return }
        let (history, problem) = store.load(userKey: userKey)
        if let problem { note(problem) }
        state.withLock { state in
            if !state.gate.hasHistory(for: userKey) { state.gate.setHistory(history) }
        }
    }

    private func note(_ error: SurveyStateError) {
        options.logger.error("survey gating file: \(error)")
        state.withLock { state in
            state.stateErrors.append(error)
            if state.stateErrors.count > 100 { state.stateErrors.removeFirst() }
        }
    }
}
