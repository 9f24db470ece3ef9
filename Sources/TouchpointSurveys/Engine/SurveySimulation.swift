import Foundation
import TouchpointCore
import TouchpointEvents

/// What a ``SurveySimulator`` replay decided: a timeline of the moments a survey was
/// considered, and a summary per survey.
public struct SurveySimulation: Sendable, Hashable {
    /// One moment a survey was considered: an event whose name a rule triggers on, or the end
    /// of a delay.
    public struct Step: Sendable, Hashable {
        /// A survey scheduled for after its delay.
        public struct Scheduled: Sendable, Hashable {
            /// The survey's id.
            public var surveyID: String
            /// When its delay ends.
            public var at: Date
        }

        /// What happened.
        public enum Trigger: Sendable, Hashable {
            /// A recorded event.
            case event(Event)
            /// The delay of a survey ended; the event that started it.
            case delayEnded(surveyID: String, event: Event)
        }

        /// When (event time).
        public var time: Date
        /// What happened.
        public var trigger: Trigger
        /// The survey shown, if any.
        public var shown: String?
        /// The survey scheduled to be shown after its delay, and when.
        public var scheduled: Scheduled?
        /// The surveys considered and not shown, in config order, with why.
        public var skipped: [SurveyDecision.Skip]

        /// The event behind the step.
        public var event: Event {
            switch trigger {
            case .event(let event), .delayEnded(_, let event): return event
            }
        }
    }

    /// The totals of one survey.
    public struct Summary: Sendable, Hashable {
        /// The survey's id.
        public var surveyID: String
        /// How many times it was shown.
        public var shown = 0
        /// How many times it was scheduled after a delay.
        public var scheduled = 0
        /// How many times it was not shown, by ``SurveySkipReason/code``.
        public var skipped: [String: Int] = [:]
    }

    /// The steps, in time order.
    public var steps: [Step]
    /// The events replayed.
    public var eventCount: Int
    /// One summary per survey of the config, in config order.
    public var summaries: [Summary]
    /// How long a shown survey was assumed to stay on screen, in seconds.
    public var answerAfter: TimeInterval

    /// The simulation as JSON, for scripts:
    /// `{"events": 14, "answerAfterSeconds": 0, "timeline": [{"time", "kind", "event", "user", "sessionId", "properties", "shown", "scheduled", "skipped": [{"id", "reason", "detail"}]}], "summary": [{"id", "shown", "scheduled", "skipped": {"cooldown": 2}}]}`.
    public var json: JSONValue {
        let timeline: [JSONValue] = steps.map { step in
            let event = step.event
            var members: [String: JSONValue] = [
                "time": .string(Timestamp.format(step.time)),
                "event": .string(event.name),
                "user": .string(SurveyGate.userKey(for: event.userId)),
                "sessionId": .string(event.sessionId.uuidString),
                "properties": .object(event.properties),
                "skipped": .array(
                    step.skipped.map { skip in
                        [
                            "id": .string(skip.surveyID), "reason": .string(skip.reason.code),
                            "detail": .string(skip.reason.description),
                        ]
                    }),
            ]
            switch step.trigger {
            case .event: members["kind"] = "event"
            case .delayEnded(let id, _):
                members["kind"] = "delayEnded"
                members["survey"] = .string(id)
            }
            members["shown"] = step.shown.map(JSONValue.string) ?? .null
            if let scheduled = step.scheduled {
                members["scheduled"] = [
                    "id": .string(scheduled.surveyID), "at": .string(Timestamp.format(scheduled.at)),
                ]
            }
            return .object(members)
        }
        let summary: [JSONValue] = summaries.map { summary in
            [
                "id": .string(summary.surveyID), "shown": .int(summary.shown), "scheduled": .int(summary.scheduled),
                "skipped": .object(summary.skipped.mapValues(JSONValue.int)),
            ]
        }
        return [
            "events": .int(eventCount), "answerAfterSeconds": SurveyConfig.number(answerAfter),
            "timeline": .array(timeline), "summary": .array(summary),
        ]
    }
}
