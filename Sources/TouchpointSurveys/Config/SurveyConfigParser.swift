import Foundation
import TouchpointCore

/// Walks a survey config as a ``JSONValue``, building the rules that are valid and collecting
/// every problem with its path. The one validator: ``SurveyConfigValidator``, strict decoding
/// and lenient loading are all this walk.
struct SurveyConfigParser {
    /// One thing the walk found.
    struct Finding {
        var problem: JSONProblem
        /// A field this version does not know: ignored by loading (a newer config still works),
        /// reported by validation (a typo is caught before it ships).
        var isUnknownField: Bool
    }

    /// What the walk produced.
    struct Result {
        var config: SurveyConfig
        var findings: [Finding]
        /// Whether the top level (`surveys`, `globalCooldownSeconds`) is sound.
        var topLevelIsSound: Bool
        /// How many entries `surveys` had, valid or not.
        var declaredSurveys: Int
        var rejected: [SurveyConfigLoad.RejectedSurvey]
    }

    static let topLevelFields: Set<String> = ["$schema", "surveys", "globalCooldownSeconds"]
    static let surveyFields: Set<String> = [
        "id", "title", "message", "options", "response", "trigger", "oncePerSession", "oncePerUser",
        "cooldownSeconds", "delaySeconds", "sampleRate",
    ]
    static let optionsResponseFields: Set<String> = ["type", "options"]
    static let textResponseFields: Set<String> = [
        "type", "placeholder", "submitLabel", "allowEmpty", "minLength", "maxLength",
    ]
    /// The longest cooldown accepted: 100 years (dates beyond it are not representable everywhere).
    static let maximumCooldown: TimeInterval = 3_153_600_000
    /// The longest delay accepted: one day (a pending delay does not survive a relaunch).
    static let maximumDelay: TimeInterval = 86_400

    private var findings: [Finding] = []

    static func parse(_ json: JSONValue) -> Result {
        var parser = SurveyConfigParser()
        return parser.parseConfig(json)
    }

    // MARK: Top level

    private mutating func parseConfig(_ json: JSONValue) -> Result {
        let root = JSONPath.root
        guard case .object(let members) = json else {
            error(root, "expected an object, found \(json.typeName)")
            return Result(
                config: SurveyConfig(), findings: findings, topLevelIsSound: false, declaredSurveys: 0, rejected: [])
        }
        reportUnknownFields(members, allowed: Self.topLevelFields, at: root)
        var sound = true
        if let schema = members["$schema"], schema.stringValue == nil {
            error(root.appending("$schema"), "expected a string, found \(schema.typeName)")
            sound = false
        }
        var globalCooldown: TimeInterval?
        if members["globalCooldownSeconds"] != nil {
            let before = findings.count
            globalCooldown = seconds(members, "globalCooldownSeconds", at: root, maximum: Self.maximumCooldown)
            if findings.count > before { sound = false }
        }
        var rules: [SurveyRule] = []
        var rejected: [SurveyConfigLoad.RejectedSurvey] = []
        var declared = 0
        switch members["surveys"] {
        case nil:
            error(root.appending("surveys"), "required field is missing")
            sound = false
        case .array(let entries)?:
            declared = entries.count
            var seen: [String: Int] = [:]
            for (index, entry) in entries.enumerated() {
                let path = root.appending("surveys").appending(index: index)
                let before = findings.count
                let rule = parseSurvey(entry, at: path)
                if let id = rule?.id ?? entry["id"]?.stringValue, !id.isEmpty {
                    if let first = seen[id] {
                        error(path.appending("id"), "duplicate survey id \"\(id)\" (also surveys[\(first)])")
                    } else {
                        seen[id] = index
                    }
                }
                let problems = findings[before...].filter { !$0.isUnknownField }.map(\.problem)
                if let rule, problems.isEmpty {
                    rules.append(rule)
                } else {
                    rejected.append(.init(index: index, id: entry["id"]?.stringValue, problems: problems))
                }
            }
        case let other?:
            error(root.appending("surveys"), "expected an array, found \(other.typeName)")
            sound = false
        }
        return Result(
            config: SurveyConfig(surveys: rules, globalCooldownSeconds: globalCooldown),
            findings: findings, topLevelIsSound: sound, declaredSurveys: declared, rejected: rejected)
    }

    // MARK: Surveys

    /// A survey rule, or nil when a required part is missing or malformed (problems recorded).
    private mutating func parseSurvey(_ json: JSONValue, at path: JSONPath) -> SurveyRule? {
        guard case .object(let members) = json else {
            error(path, "expected an object, found \(json.typeName)")
            return nil
        }
        reportUnknownFields(members, allowed: Self.surveyFields, at: path)
        let id = requiredString(members, "id", at: path, nonEmpty: true)
        let title = requiredString(members, "title", at: path, nonEmpty: false)
        let message = requiredString(members, "message", at: path, nonEmpty: false)
        let legacy = members["options"].flatMap { optionList($0, at: path.appending("options")) }
        var response: SurveyResponse?
        if let json = members["response"] {
            response = parseResponse(json, at: path.appending("response"))
        } else if let legacy {
            response = .options(legacy)
        } else if members["options"] == nil {
            error(path.appending("response"), "required field is missing (or give the legacy \"options\")")
        }
        let trigger = members["trigger"].flatMap { parseTrigger($0, at: path.appending("trigger")) }
        if members["trigger"] == nil { error(path.appending("trigger"), "required field is missing") }
        let oncePerSession = boolean(members, "oncePerSession", at: path) ?? true
        let oncePerUser = boolean(members, "oncePerUser", at: path) ?? false
        let cooldown = seconds(members, "cooldownSeconds", at: path, maximum: Self.maximumCooldown)
        let delay = seconds(members, "delaySeconds", at: path, maximum: Self.maximumDelay)
        var sampleRate: Double?
        if let json = members["sampleRate"] {
            if let rate = json.doubleValue, rate >= 0, rate <= 1 {
                sampleRate = rate
            } else {
                error(path.appending("sampleRate"), "expected a number from 0 to 1, found \(describe(json))")
            }
        }
        guard let id, let title, let message, let response, let trigger else { return nil }
        return SurveyRule(
            id: id, title: title, message: message, response: response, trigger: trigger, options: legacy,
            oncePerSession: oncePerSession, oncePerUser: oncePerUser, cooldownSeconds: cooldown,
            delaySeconds: delay, sampleRate: sampleRate)
    }

    private mutating func parseResponse(_ json: JSONValue, at path: JSONPath) -> SurveyResponse? {
        guard case .object(let members) = json else {
            error(path, "expected an object, found \(json.typeName)")
            return nil
        }
        guard let typeValue = members["type"] else {
            error(path.appending("type"), "required field is missing (\"options\" or \"text\")")
            return nil
        }
        guard case .string(let type) = typeValue else {
            error(path.appending("type"), "expected a string, found \(typeValue.typeName)")
            return nil
        }
        switch type {
        case "options":
            reportUnknownFields(members, allowed: Self.optionsResponseFields, at: path)
            guard let list = members["options"] else {
                error(path.appending("options"), "required field is missing")
                return nil
            }
            return optionList(list, at: path.appending("options")).map { .options($0) }
        case "text":
            reportUnknownFields(members, allowed: Self.textResponseFields, at: path)
            let placeholder = optionalString(members, "placeholder", at: path)
            let submitLabel = optionalString(members, "submitLabel", at: path)
            let allowEmpty = boolean(members, "allowEmpty", at: path) ?? false
            let minLength = integer(members, "minLength", at: path, minimum: 0)
            let maxLength = integer(members, "maxLength", at: path, minimum: 1)
            if let minLength, let maxLength, maxLength < minLength {
                error(path.appending("maxLength"), "maxLength \(maxLength) is less than minLength \(minLength)")
                return nil
            }
            return .text(
                SurveyTextResponse(
                    placeholder: placeholder, submitLabel: submitLabel, allowEmpty: allowEmpty,
                    minLength: minLength, maxLength: maxLength))
        default:
            error(
                path.appending("type"),
                "unknown response type \(JSONValue.string(type).jsonString()) (expected \"options\" or \"text\")")
            return nil
        }
    }

    /// A non-empty list of distinct, non-empty strings.
    private mutating func optionList(_ json: JSONValue, at path: JSONPath) -> [String]? {
        guard case .array(let elements) = json else {
            error(path, "expected an array of strings, found \(json.typeName)")
            return nil
        }
        guard !elements.isEmpty else {
            error(path, "expected at least one option")
            return nil
        }
        var options: [String] = []
        var valid = true
        for (index, element) in elements.enumerated() {
            guard case .string(let option) = element else {
                error(path.appending(index: index), "expected a string, found \(element.typeName)")
                valid = false
                continue
            }
            if option.isEmpty {
                error(path.appending(index: index), "an option must not be empty")
                valid = false
            } else if options.contains(option) {
                error(path.appending(index: index), "duplicate option \(element.jsonString())")
                valid = false
            }
            options.append(option)
        }
        return valid ? options : nil
    }

    // MARK: Triggers

    private mutating func parseTrigger(_ json: JSONValue, at path: JSONPath) -> TriggerCondition? {
        guard case .object(let members) = json else {
            error(path, "expected an object, found \(json.typeName)")
            return nil
        }
        reportUnknownFields(members, allowed: ["event"], at: path)
        guard let event = members["event"] else {
            error(path.appending("event"), "required field is missing")
            return nil
        }
        return parseEventTrigger(event, at: path.appending("event")).map(TriggerCondition.init(event:))
    }

    private mutating func parseEventTrigger(_ json: JSONValue, at path: JSONPath) -> EventTrigger? {
        guard case .object(let members) = json else {
            error(path, "expected an object, found \(json.typeName)")
            return nil
        }
        reportUnknownFields(members, allowed: ["name", "properties"], at: path)
        let name = requiredString(members, "name", at: path, nonEmpty: true)
        var matchers: [String: PropertyMatcher]?
        var valid = true
        if let properties = members["properties"] {
            if case .object(let conditions) = properties {
                var parsed: [String: PropertyMatcher] = [:]
                for key in conditions.keys.sorted() {
                    if let matcher = parseMatcher(conditions[key]!, at: path.appending("properties").appending(key)) {
                        parsed[key] = matcher
                    } else {
                        valid = false
                    }
                }
                matchers = parsed
            } else {
                error(path.appending("properties"), "expected an object, found \(properties.typeName)")
                valid = false
            }
        }
        guard let name, valid else { return nil }
        return EventTrigger(name: name, properties: matchers)
    }

    private mutating func parseMatcher(_ json: JSONValue, at path: JSONPath) -> PropertyMatcher? {
        switch json {
        case .string, .int, .double, .bool:
            return PropertyMatcher(.eq, json)
        case .object(let members):
            reportUnknownFields(members, allowed: ["op", "value"], at: path)
            guard let opValue = members["op"] else {
                error(path.appending("op"), "required field is missing (an operator object needs \"op\")")
                return nil
            }
            guard case .string(let name) = opValue else {
                error(path.appending("op"), "expected a string, found \(opValue.typeName)")
                return nil
            }
            guard let op = PropertyMatcher.Operator(rawValue: name) else {
                error(path.appending("op"), "unknown operator \(opValue.jsonString())")
                return nil
            }
            let value = members["value"]
            if op.takesValue {
                guard let value else {
                    error(
                        path.appending("value"),
                        "required field is missing (\(op.rawValue) compares with \(op.expectedValue))")
                    return nil
                }
                guard op.accepts(value) else {
                    error(
                        path.appending("value"),
                        "\(op.rawValue) compares with \(op.expectedValue), found \(value.typeName)")
                    return nil
                }
                return PropertyMatcher(op, value)
            }
            if value != nil {
                error(path.appending("value"), "\(op.rawValue) takes no value")
                return nil
            }
            return PropertyMatcher(op)
        case .null, .array:
            error(path, "expected a string, number, boolean or {\"op\": …} object, found \(json.typeName)")
            return nil
        }
    }

    // MARK: Fields

    private mutating func requiredString(
        _ members: [String: JSONValue], _ key: String, at path: JSONPath, nonEmpty: Bool
    ) -> String? {
        guard let value = members[key] else {
            error(path.appending(key), "required field is missing")
            return nil
        }
        guard case .string(let text) = value else {
            error(path.appending(key), "expected a string, found \(value.typeName)")
            return nil
        }
        if nonEmpty && text.isEmpty {
            error(path.appending(key), "must not be empty")
            return nil
        }
        return text
    }

    private mutating func optionalString(_ members: [String: JSONValue], _ key: String, at path: JSONPath) -> String? {
        guard let value = members[key] else { return nil }
        guard case .string(let text) = value else {
            error(path.appending(key), "expected a string, found \(value.typeName)")
            return nil
        }
        return text
    }

    private mutating func boolean(_ members: [String: JSONValue], _ key: String, at path: JSONPath) -> Bool? {
        guard let value = members[key] else { return nil }
        guard case .bool(let flag) = value else {
            error(path.appending(key), "expected a boolean, found \(value.typeName)")
            return nil
        }
        return flag
    }

    private mutating func integer(
        _ members: [String: JSONValue], _ key: String, at path: JSONPath, minimum: Int
    ) -> Int? {
        guard let value = members[key] else { return nil }
        guard let number = value.intValue, number >= minimum else {
            error(path.appending(key), "expected an integer of at least \(minimum), found \(describe(value))")
            return nil
        }
        return number
    }

    private mutating func seconds(
        _ members: [String: JSONValue], _ key: String, at path: JSONPath, maximum: TimeInterval
    ) -> TimeInterval? {
        guard let value = members[key] else { return nil }
        guard let number = value.doubleValue, number >= 0, number <= maximum else {
            error(
                path.appending(key), "expected a number of seconds from 0 to \(Int(maximum)), found \(describe(value))")
            return nil
        }
        return number
    }

    private mutating func reportUnknownFields(_ members: [String: JSONValue], allowed: Set<String>, at path: JSONPath) {
        for key in members.keys.sorted() where !allowed.contains(key) {
            findings.append(
                Finding(problem: JSONProblem(path: path.appending(key), message: "unknown field"), isUnknownField: true)
            )
        }
    }

    private mutating func error(_ path: JSONPath, _ message: String) {
        findings.append(Finding(problem: JSONProblem(path: path, message: message), isUnknownField: false))
    }

    /// A value for a message: numbers and short strings as JSON, anything else by its type.
    private func describe(_ value: JSONValue) -> String {
        switch value {
        case .int, .double, .bool: return value.jsonString()
        default: return value.typeName
        }
    }
}
