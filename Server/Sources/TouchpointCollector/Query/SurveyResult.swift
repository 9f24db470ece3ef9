/// How one survey did: how often it was shown, answered and dismissed, and what people answered.
///
/// Built from the SDK's `survey_presented`, `survey_response` and `survey_dismissed` events
/// (`properties.id` names the survey).
public struct SurveyResult: Sendable, Hashable {
    /// The survey's id.
    public var surveyId: String
    /// `survey_presented` events.
    public var presented: Int
    /// `survey_response` events.
    public var responded: Int
    /// `survey_dismissed` events.
    public var dismissed: Int
    /// Choice answers: how many times each option was picked.
    public var choices: [String: Int]
    /// How many answers were free text (read them with the text-answers query).
    public var textAnswers: Int

    /// Creates a result.
    public init(
        surveyId: String, presented: Int = 0, responded: Int = 0, dismissed: Int = 0, choices: [String: Int] = [:],
        textAnswers: Int = 0
    ) {
        self.surveyId = surveyId
        self.presented = presented
        self.responded = responded
        self.dismissed = dismissed
        self.choices = choices
        self.textAnswers = textAnswers
    }

    /// Responses per presentation, or nil when the survey was never presented.
    public var responseRate: Double? { presented > 0 ? Double(responded) / Double(presented) : nil }
}
