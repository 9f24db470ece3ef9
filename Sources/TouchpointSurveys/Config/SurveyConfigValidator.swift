import TouchpointCore

/// The survey config validator: every problem in a config, each with its JSON path.
///
/// It needs no engine, recorder or file, so the collector can check a config before it
/// accepts it (`PUT /v1/config/surveys` answers 422 with the problems), and
/// `touchpoint surveys validate` prints the same list:
///
/// ```swift
/// let problems = SurveyConfigValidator.validate(try JSONParser.parse(body))
/// // ["surveys[1].trigger.event.properties.amount.op: unknown operator \"gtt\""]
/// let check: (JSONValue) -> [JSONProblem] = SurveyConfigValidator.validate
/// ```
///
/// It is the same walk that decoding and lenient loading run, so the three never disagree.
/// Validation is the strict reading: fields this version does not know are problems here
/// (`unknown field`), so a typo such as `oncePerSesion` is caught before it ships, while
/// loading in an app ignores them so that an older SDK keeps working with a newer config.
public enum SurveyConfigValidator {
    /// Every problem in `json` as a survey config, in document order; empty when it is valid.
    /// - Parameter json: the parsed config.
    /// - Returns: the problems, each `path: reason`.
    public static func validate(_ json: JSONValue) -> [JSONProblem] {
        SurveyConfigParser.parse(json).findings.map(\.problem)
    }

    /// Every problem in `bytes` as a survey config: a JSON syntax error (its path is the root
    /// and its message names the byte offset), or the problems of ``validate(_:)``.
    /// - Parameter bytes: the config's UTF-8 text.
    /// - Returns: the problems; empty when it is valid.
    public static func validate(bytes: [UInt8]) -> [JSONProblem] {
        do {
            return validate(try JSONParser.parse(bytes))
        } catch {
            return [JSONProblem(path: .root, message: error.description)]
        }
    }
}
