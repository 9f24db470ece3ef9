import Foundation
import TouchpointCore

/// The survey configuration: an ordered list of survey rules and the settings they share.
///
/// Decode it from the JSON a product team writes (the format ``SurveySchema`` describes):
///
/// ```swift
/// let config = try JSONDecoder().decode(SurveyConfig.self, from: data)
/// let fromBundle = try SurveyConfig.from(url: Bundle.main.url(forResource: "survey", withExtension: "json")!)
/// ```
///
/// Decoding is strict: any problem throws a ``SurveyConfigError`` that lists every problem with
/// its JSON path. ``load(json:)`` is the lenient form the engine and ``SurveyConfigManager``
/// use for configs that arrive from a server: a malformed survey is dropped and reported, the
/// others keep working. Both run the one validator, ``SurveyConfigValidator``.
///
/// Write each key once per object: where a key repeats, Foundation's `JSONDecoder` keeps its
/// first value and Touchpoint's `JSONParser` (``from(url:)``, ``load(json:)``, the manager,
/// the command-line tool) its last, and no validator sees the repeat.
public struct SurveyConfig: Sendable, Hashable {
    /// The survey rules, in order: when an event matches several, the first eligible one is shown.
    public var surveys: [SurveyRule]
    /// The least time, in seconds, between two surveys of any kind for the same user; nil for
    /// no global cooldown. JSON field `globalCooldownSeconds` (a Touchpoint addition).
    public var globalCooldownSeconds: TimeInterval?

    /// Creates a configuration.
    /// - Parameters:
    ///   - surveys: the rules, in order.
    ///   - globalCooldownSeconds: the least time between two surveys for one user, or nil.
    public init(surveys: [SurveyRule] = [], globalCooldownSeconds: TimeInterval? = nil) {
        self.surveys = surveys
        self.globalCooldownSeconds = globalCooldownSeconds
    }

    /// The rule with this id, if any.
    public func survey(id: String) -> SurveyRule? { surveys.first { $0.id == id } }
}
