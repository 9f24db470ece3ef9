import Foundation
import Logging
import TouchpointCore

extension SurveyConfig {
    /// Reads a config file strictly.
    ///
    /// ```swift
    /// let config = try SurveyConfig.from(url: Bundle.main.url(forResource: "survey", withExtension: "json")!)
    /// ```
    /// - Parameter url: a file URL.
    /// - Returns: the config.
    /// - Throws: ``SurveyConfigError`` (`unreadable`, `invalidJSON`, or `invalidConfig` listing
    ///   every problem with its path). Unknown fields are ignored.
    public static func from(url: URL) throws(SurveyConfigError) -> SurveyConfig {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw SurveyConfigError(
                code: .unreadable, url: url,
                problems: [JSONProblem(path: .root, message: "\(error.localizedDescription)")])
        }
        return try from(bytes: Array(data), url: url)
    }

    /// Reads a config from JSON text strictly.
    /// - Parameters:
    ///   - bytes: the UTF-8 JSON.
    ///   - url: where it came from, for the error's message.
    /// - Returns: the config.
    /// - Throws: ``SurveyConfigError`` (`invalidJSON` or `invalidConfig`).
    public static func from(bytes: [UInt8], url: URL? = nil) throws(SurveyConfigError) -> SurveyConfig {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            throw SurveyConfigError(
                code: .invalidJSON, url: url, problems: [JSONProblem(path: .root, message: error.description)])
        }
        return try from(json: json, url: url)
    }

    /// Builds a config from parsed JSON strictly.
    /// - Parameters:
    ///   - json: the parsed config.
    ///   - url: where it came from, for the error's message.
    /// - Returns: the config.
    /// - Throws: ``SurveyConfigError`` `invalidConfig` listing every problem.
    public static func from(json: JSONValue, url: URL? = nil) throws(SurveyConfigError) -> SurveyConfig {
        let load = load(json: json)
        guard load.isValid else { throw SurveyConfigError(code: .invalidConfig, url: url, problems: load.problems) }
        return load.config
    }

    /// Loads a config leniently: malformed surveys are dropped and reported, the valid ones
    /// kept; unknown fields are ignored.
    /// - Parameter json: the parsed config.
    /// - Returns: the valid surveys and every problem.
    public static func load(json: JSONValue) -> SurveyConfigLoad {
        let result = SurveyConfigParser.parse(json)
        let usable = result.topLevelIsSound && (result.declaredSurveys == 0 || !result.config.surveys.isEmpty)
        return SurveyConfigLoad(
            config: result.topLevelIsSound ? result.config : SurveyConfig(),
            problems: result.findings.filter { !$0.isUnknownField }.map(\.problem),
            rejectedSurveys: result.rejected,
            ignoredFields: result.findings.filter(\.isUnknownField).map(\.problem.path),
            isUsable: usable)
    }

    /// Loads JSON text leniently; text that is not JSON gives an unusable, empty result whose
    /// one problem names the byte offset.
    /// - Parameter bytes: the UTF-8 JSON.
    /// - Returns: the valid surveys and every problem.
    public static func load(bytes: [UInt8]) -> SurveyConfigLoad {
        do {
            return load(json: try JSONParser.parse(bytes))
        } catch {
            return SurveyConfigLoad(
                config: SurveyConfig(), problems: [JSONProblem(path: .root, message: error.description)],
                rejectedSurveys: [], ignoredFields: [], isUsable: false)
        }
    }
}

extension SurveyConfigLoad {
    /// Logs the dropped surveys (warning) and ignored fields (debug) of this load.
    func log(to logger: Logger, source: String) {
        for rejected in rejectedSurveys {
            logger.warning(
                "survey dropped from the config: \(rejected.problems.map(\.description).joined(separator: "; "))",
                metadata: ["source": "\(source)", "survey": "\(rejected.id ?? "#\(rejected.index)")"])
        }
        if !isUsable {
            logger.error(
                "unusable survey config: \(problems.map(\.description).joined(separator: "; "))",
                metadata: ["source": "\(source)"])
        }
        for path in ignoredFields {
            logger.debug(
                "ignored an unknown field of the survey config", metadata: ["source": "\(source)", "path": "\(path)"])
        }
    }
}
