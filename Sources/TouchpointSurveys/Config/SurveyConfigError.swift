import Foundation
import TouchpointCore

/// Why a survey config could not be read: a stable code, the file (when there was one), and
/// every problem with its JSON path.
///
/// ```
/// invalidConfig survey.json: 2 problems
///   surveys[1].trigger.event.properties.amount.op: unknown operator "gtt"
///   surveys[1].id: duplicate survey id "ask_rating" (also surveys[0])
/// ```
public struct SurveyConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem, stable across releases.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case unreadable, invalidJSON, invalidConfig
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The file could not be read.
        public static let unreadable = Code(.unreadable)
        /// The text is not JSON; the problem's message names the byte offset.
        public static let invalidJSON = Code(.invalidJSON)
        /// The JSON is not a valid survey config; see ``SurveyConfigError/problems``.
        public static let invalidConfig = Code(.invalidConfig)

        /// The code's name, e.g. `invalidConfig`.
        public var description: String { base.rawValue }
    }

    /// The kind of problem.
    public let code: Code
    /// The file, when the config came from one.
    public let url: URL?
    /// Every problem, with its path (one for an unreadable file or invalid JSON).
    public let problems: [JSONProblem]

    /// Creates an error.
    public init(code: Code, url: URL? = nil, problems: [JSONProblem]) {
        self.code = code
        self.url = url
        self.problems = problems
    }

    public var description: String {
        let source = url.map { " " + $0.path } ?? ""
        if problems.count == 1 { return "\(code)\(source): \(problems[0])" }
        return "\(code)\(source): \(problems.count) problems"
            + problems.map { "\n  \($0)" }.joined()
    }
}
