import Foundation

/// The settings of a free-text survey, and the validation of an answer against them.
///
/// Answers are trimmed of leading and trailing whitespace and newlines first; the length
/// limits apply to the trimmed text and count characters as a reader does (grapheme clusters:
/// `"é"` and `"👍🏽"` are one character each).
///
/// ```swift
/// let response = SurveyTextResponse(minLength: 5, maxLength: 500)
/// response.validate("  ok  ")        // .tooShort(minimum: 5, length: 2)
/// response.validate(" Loved it! ")   // .valid("Loved it!")
/// ```
public struct SurveyTextResponse: Sendable, Hashable {
    /// The editor's placeholder.
    public var placeholder: String?
    /// The submit button's label.
    public var submitLabel: String?
    /// Whether an empty answer (after trimming) may be submitted (default false). An empty
    /// answer is then accepted even when ``minLength`` is set; a non-empty one must still
    /// reach it.
    public var allowEmpty: Bool
    /// The fewest characters a non-empty trimmed answer must have.
    public var minLength: Int?
    /// The most characters a trimmed answer may have.
    public var maxLength: Int?

    /// Creates text settings.
    /// - Parameters:
    ///   - placeholder: the editor's placeholder.
    ///   - submitLabel: the submit button's label.
    ///   - allowEmpty: whether an empty answer may be submitted.
    ///   - minLength: the fewest characters of a non-empty answer.
    ///   - maxLength: the most characters of an answer.
    public init(
        placeholder: String? = nil,
        submitLabel: String? = nil,
        allowEmpty: Bool = false,
        minLength: Int? = nil,
        maxLength: Int? = nil
    ) {
        self.placeholder = placeholder
        self.submitLabel = submitLabel
        self.allowEmpty = allowEmpty
        self.minLength = minLength
        self.maxLength = maxLength
    }

    /// Trims `text` and checks it against ``allowEmpty``, ``minLength`` and ``maxLength``.
    /// - Parameter text: the answer as typed.
    /// - Returns: ``SurveyTextValidation/valid(_:)`` with the trimmed text, or why it cannot
    ///   be submitted.
    public func validate(_ text: String) -> SurveyTextValidation {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let length = trimmed.count
        if length == 0 { return allowEmpty ? .valid("") : .empty }
        if let minLength, length < minLength { return .tooShort(minimum: minLength, length: length) }
        if let maxLength, length > maxLength { return .tooLong(maximum: maxLength, length: length) }
        return .valid(trimmed)
    }
}
