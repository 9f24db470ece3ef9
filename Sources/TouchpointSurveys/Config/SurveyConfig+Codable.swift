import Foundation
import TouchpointCore

extension SurveyConfig: Codable {
    /// Decodes and validates a config, as the CXHero seed does:
    /// `try JSONDecoder().decode(SurveyConfig.self, from: data)`.
    ///
    /// - Throws: ``SurveyConfigError`` `invalidConfig` listing every problem with its JSON path
    ///   (unknown fields are ignored).
    public init(from decoder: any Decoder) throws {
        self = try Self.from(json: JSONValue(from: decoder))
    }

    /// Encodes the config as the JSON it was read from (legacy `options` kept; every rule gets
    /// its effective `response`).
    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }

    /// The config as JSON, in the format ``SurveyConfig/load(json:)`` reads back.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["surveys": .array(surveys.map(\.json))]
        if let globalCooldownSeconds { members["globalCooldownSeconds"] = Self.number(globalCooldownSeconds) }
        return .object(members)
    }

    /// A whole number of seconds as `.int`, anything else as `.double`.
    static func number(_ value: Double) -> JSONValue {
        if let exact = Int(exactly: value) { return .int(exact) }
        return .double(value)
    }
}

extension SurveyRule {
    /// The rule as JSON.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "id": .string(id), "title": .string(title), "message": .string(message),
            "response": response.json, "trigger": trigger.json,
            "oncePerSession": .bool(oncePerSession), "oncePerUser": .bool(oncePerUser),
        ]
        if let options { members["options"] = .array(options.map(JSONValue.string)) }
        if let cooldownSeconds { members["cooldownSeconds"] = SurveyConfig.number(cooldownSeconds) }
        if let delaySeconds { members["delaySeconds"] = SurveyConfig.number(delaySeconds) }
        if let sampleRate { members["sampleRate"] = SurveyConfig.number(sampleRate) }
        return .object(members)
    }
}

extension SurveyResponse {
    /// The response as JSON.
    public var json: JSONValue {
        switch self {
        case .options(let options):
            return ["type": "options", "options": .array(options.map(JSONValue.string))]
        case .text(let text):
            var members: [String: JSONValue] = ["type": "text", "allowEmpty": .bool(text.allowEmpty)]
            if let placeholder = text.placeholder { members["placeholder"] = .string(placeholder) }
            if let submitLabel = text.submitLabel { members["submitLabel"] = .string(submitLabel) }
            if let minLength = text.minLength { members["minLength"] = .int(minLength) }
            if let maxLength = text.maxLength { members["maxLength"] = .int(maxLength) }
            return .object(members)
        }
    }
}

extension TriggerCondition {
    /// The trigger as JSON.
    public var json: JSONValue {
        var event: [String: JSONValue] = ["name": .string(self.event.name)]
        if let properties = self.event.properties {
            event["properties"] = .object(properties.mapValues(\.json))
        }
        return ["event": .object(event)]
    }
}

extension PropertyMatcher {
    /// The matcher as JSON, always in the operator form: `{"op": "gt", "value": 50}`.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["op": .string(op.rawValue)]
        if let value { members["value"] = value }
        return .object(members)
    }
}
