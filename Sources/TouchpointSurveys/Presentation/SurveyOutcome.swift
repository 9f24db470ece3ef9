/// How a presentation ended.
public enum SurveyOutcome: Sendable, Hashable {
    /// The user chose this option (`survey_response` with `type: "choice"`).
    case choice(String)
    /// The user submitted this text, trimmed and valid (`survey_response` with `type: "text"`).
    case text(String)
    /// The user (or the app, or the engine stopping) dismissed the survey without answering
    /// (`survey_dismissed`).
    case dismissed
}
