/// How the user answers a survey: by choosing one of several buttons, or by writing text.
///
/// JSON: `{"type": "options", "options": ["Great", "Okay", "Poor"]}` or
/// `{"type": "text", "placeholder": "…", "submitLabel": "…", "allowEmpty": false, "minLength": 5, "maxLength": 500}`.
public enum SurveyResponse: Sendable, Hashable {
    /// Buttons, one per option; choosing one submits it (`survey_response` with `type: "choice"`).
    case options([String])
    /// A text editor; the trimmed text is validated, then submitted (`type: "text"`).
    case text(SurveyTextResponse)

    /// The JSON `type`: `"options"` or `"text"`.
    public var type: String {
        switch self {
        case .options: return "options"
        case .text: return "text"
        }
    }

    /// The options of an options response; nil for text.
    public var options: [String]? {
        if case .options(let options) = self { return options }
        return nil
    }

    /// The settings of a text response; nil for options.
    public var text: SurveyTextResponse? {
        if case .text(let text) = self { return text }
        return nil
    }
}
