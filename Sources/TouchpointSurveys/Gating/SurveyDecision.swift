import Foundation

/// What gating decided for one trigger (an event, or the end of a delay).
public struct SurveyDecision: Sendable, Hashable {
    /// What to do.
    public enum Action: Sendable, Hashable {
        /// Show this survey now. Gating has already noted the presentation.
        case present(SurveyRule)
        /// Wait until the date, then ask gating again (``SurveyGate/delayEnded(surveyID:rule:now:)``).
        case schedule(SurveyRule, at: Date)
        /// Show nothing.
        case none
    }

    /// A survey that was considered and not shown.
    public struct Skip: Sendable, Hashable {
        /// The survey's id.
        public var surveyID: String
        /// Why.
        public var reason: SurveySkipReason

        /// Creates a skip record.
        public init(surveyID: String, reason: SurveySkipReason) {
            self.surveyID = surveyID
            self.reason = reason
        }
    }

    /// What to do.
    public var action: Action
    /// The other candidates, in config order, each with why it was not chosen.
    public var skipped: [Skip]

    /// Creates a decision.
    public init(action: Action, skipped: [Skip] = []) {
        self.action = action
        self.skipped = skipped
    }
}
