/// Whether a text answer can be submitted, and if not, why.
///
/// A view shows ``message`` under the editor and enables its submit button on ``isValid``.
public enum SurveyTextValidation: Sendable, Hashable {
    /// The answer can be submitted; the trimmed text that will be.
    case valid(String)
    /// The trimmed answer is empty and the survey does not allow that.
    case empty
    /// The trimmed answer has `length` characters, fewer than `minimum`.
    case tooShort(minimum: Int, length: Int)
    /// The trimmed answer has `length` characters, more than `maximum`.
    case tooLong(maximum: Int, length: Int)
    /// The survey is not a text survey, or the presentation has already ended.
    case notAccepted

    /// Whether the answer can be submitted.
    public var isValid: Bool {
        if case .valid = self { return true }
        return false
    }

    /// Why the answer cannot be submitted, for the user; nil when it can.
    public var message: String? {
        switch self {
        case .valid: return nil
        case .empty: return "Please write an answer."
        case .tooShort(let minimum, _):
            return "Please write at least \(minimum) character\(minimum == 1 ? "" : "s")."
        case .tooLong(let maximum, let length):
            return "Please shorten your answer to \(maximum) characters (it has \(length))."
        case .notAccepted: return "This survey no longer accepts answers."
        }
    }
}
