import TouchpointCore

/// What lenient loading made of a config: the surveys that are valid, and every problem.
///
/// A malformed survey is dropped and named in ``rejectedSurveys``; the others work. Fields this
/// version does not know are ignored (a config written for a newer SDK still loads) and listed
/// in ``ignoredFields``.
///
/// ```swift
/// let load = SurveyConfig.load(json: try JSONParser.parse(bytes))
/// for problem in load.problems { print(problem) }  // surveys[1].trigger.event.properties.amount.op: unknown operator "gtt"
/// engine.update(config: load.config)
/// ```
public struct SurveyConfigLoad: Sendable, Hashable {
    /// A survey that was dropped, and why.
    public struct RejectedSurvey: Sendable, Hashable {
        /// Its position in `surveys`.
        public var index: Int
        /// Its `id`, when it had a string one.
        public var id: String?
        /// What was wrong with it, with paths.
        public var problems: [JSONProblem]

        /// Creates a rejection record.
        public init(index: Int, id: String?, problems: [JSONProblem]) {
            self.index = index
            self.id = id
            self.problems = problems
        }
    }

    /// The valid surveys, in their order, with the top-level settings.
    public var config: SurveyConfig
    /// Every problem found, in document order (unknown fields excluded).
    public var problems: [JSONProblem]
    /// The surveys that were dropped.
    public var rejectedSurveys: [RejectedSurvey]
    /// Fields that were not recognised and were ignored.
    public var ignoredFields: [JSONPath]
    /// Whether the config can be used: its top level is sound (an object with a `surveys` array
    /// and valid shared settings), and it either declares no surveys or at least one is valid.
    /// ``SurveyConfigManager`` never replaces a good config with one that is not usable.
    public var isUsable: Bool

    /// Creates a load result.
    public init(
        config: SurveyConfig, problems: [JSONProblem], rejectedSurveys: [RejectedSurvey], ignoredFields: [JSONPath],
        isUsable: Bool
    ) {
        self.config = config
        self.problems = problems
        self.rejectedSurveys = rejectedSurveys
        self.ignoredFields = ignoredFields
        self.isUsable = isUsable
    }

    /// Whether there was no problem at all (unknown fields aside).
    public var isValid: Bool { problems.isEmpty }
}
