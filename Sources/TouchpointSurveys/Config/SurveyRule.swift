import Foundation
import TouchpointCore

/// One survey: what it asks, when it is shown, and how often.
///
/// JSON fields (see ``SurveySchema``): `id`, `title`, `message`, `response` (or the legacy
/// `options`), `trigger`, `oncePerSession` (default `true`), `oncePerUser` (default `false`),
/// `cooldownSeconds`, and Touchpoint's additions `delaySeconds` and `sampleRate`.
///
/// Precedence, as the CXHero seed defines it:
/// - `response` wins over `options` when both are given; `options` alone becomes an options
///   response.
/// - `oncePerUser` wins over `cooldownSeconds`: once the rule was shown to a user, it never
///   shows again for that user, whatever the cooldown.
public struct SurveyRule: Sendable, Hashable, Identifiable {
    /// The stable identifier, used by gating and in the `survey_*` events.
    public var id: String
    /// The title shown in the survey sheet.
    public var title: String
    /// The message shown under the title.
    public var message: String
    /// The legacy list of options, as written in the JSON; nil when absent. ``response`` is
    /// what is shown.
    public var options: [String]?
    /// What the user answers with: buttons or free text (after the precedence rule).
    public var response: SurveyResponse
    /// When the survey is shown.
    public var trigger: TriggerCondition
    /// Whether the survey is shown at most once per session (default true).
    public var oncePerSession: Bool
    /// Whether the survey is shown at most once per user, ever (default false).
    public var oncePerUser: Bool
    /// The least time, in seconds, between two presentations of this survey to one user.
    public var cooldownSeconds: TimeInterval?
    /// Seconds to wait after the triggering event before showing the survey; eligibility is
    /// checked again when the wait ends. Nil or 0 shows it at once.
    public var delaySeconds: TimeInterval?
    /// The share of users, from 0 to 1, who can ever see this survey; nil means all. The
    /// decision is sticky: a hash of the survey id and the user id, not a coin flip per event.
    public var sampleRate: Double?

    /// Creates a rule.
    /// - Parameters:
    ///   - id: the stable identifier.
    ///   - title: the sheet's title.
    ///   - message: the sheet's message.
    ///   - response: buttons or free text.
    ///   - trigger: when to show the survey.
    ///   - options: the legacy options as written, kept for reference (``response`` is used).
    ///   - oncePerSession: at most once per session (default true).
    ///   - oncePerUser: at most once per user (default false).
    ///   - cooldownSeconds: the least time between two presentations to one user.
    ///   - delaySeconds: the wait between the trigger and the presentation.
    ///   - sampleRate: the share of users who can see it, 0 to 1.
    public init(
        id: String,
        title: String,
        message: String,
        response: SurveyResponse,
        trigger: TriggerCondition,
        options: [String]? = nil,
        oncePerSession: Bool = true,
        oncePerUser: Bool = false,
        cooldownSeconds: TimeInterval? = nil,
        delaySeconds: TimeInterval? = nil,
        sampleRate: Double? = nil
    ) {
        self.id = id
        self.title = title
        self.message = message
        self.options = options
        self.response = response
        self.trigger = trigger
        self.oncePerSession = oncePerSession
        self.oncePerUser = oncePerUser
        self.cooldownSeconds = cooldownSeconds
        self.delaySeconds = delaySeconds
        self.sampleRate = sampleRate
    }

    /// `"options"` or `"text"`: the `responseType` of the `survey_presented` and
    /// `survey_dismissed` events.
    public var responseType: String { response.type }
}
