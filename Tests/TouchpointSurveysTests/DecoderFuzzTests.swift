import Foundation
import Testing
import Touchpoint

/// Randomised, bounded tests of the config decoder: any input, no crash; and validation,
/// strict decoding and lenient loading always tell the same story.
struct DecoderFuzzTests {
    /// Values that tend to break things: wrong types, operator names, edges of ranges.
    static let interesting: [JSONValue] = [
        .null, true, false, 0, -1, 1, 0.5, 1.5, -0.0, 86_400, 86_401, 3_153_600_001, 1e300, -1e300,
        .int(Int.max), .int(Int.min), "", "gt", "gtt", "exists", "options", "text", "checkout_success",
        "é👍🏽", [], [:], ["A", "A"], ["A", 1], ["op": "gt", "value": 1], ["op": "exists"],
        ["op": "contains", "value": ""],
        ["type": "text", "minLength": 10, "maxLength": 5], ["type": "options", "options": ["x"]],
        ["event": ["name": "e"]], ["event": ["name": "e", "properties": ["p": ["op": "ne", "value": 1]]]],
    ]
    static let keys = [
        "id", "title", "message", "options", "response", "trigger", "oncePerSession", "oncePerUser",
        "cooldownSeconds", "delaySeconds", "sampleRate", "type", "placeholder", "submitLabel", "allowEmpty",
        "minLength", "maxLength", "event", "name", "properties", "op", "value", "surveys", "globalCooldownSeconds",
        "$schema", "amount", "unknown",
    ]

    static func randomValue(_ random: inout SeededRandomNumberGenerator, depth: Int) -> JSONValue {
        if depth > 3 || Bool.random(using: &random) { return interesting.randomElement(using: &random)! }
        if Bool.random(using: &random) {
            return .array(
                (0..<Int.random(in: 0...3, using: &random)).map { _ in randomValue(&random, depth: depth + 1) })
        }
        var members: [String: JSONValue] = [:]
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            members[keys.randomElement(using: &random)!] = randomValue(&random, depth: depth + 1)
        }
        return .object(members)
    }

    /// Replaces, deletes or adds one node somewhere in `value`.
    static func mutate(_ value: JSONValue, _ random: inout SeededRandomNumberGenerator, depth: Int = 0) -> JSONValue {
        let here = Int.random(in: 0..<4, using: &random) == 0
        switch value {
        case .object(var members) where !members.isEmpty && !here:
            let key = members.keys.sorted().randomElement(using: &random)!
            switch Int.random(in: 0..<6, using: &random) {
            case 0: members[key] = nil
            case 1: members[keys.randomElement(using: &random)!] = randomValue(&random, depth: depth)
            default: members[key] = mutate(members[key]!, &random, depth: depth + 1)
            }
            return .object(members)
        case .array(var elements) where !elements.isEmpty && !here:
            let index = Int.random(in: 0..<elements.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0: elements.remove(at: index)
            case 1: elements.append(elements[index])
            default: elements[index] = mutate(elements[index], &random, depth: depth + 1)
            }
            return .array(elements)
        default:
            return randomValue(&random, depth: depth)
        }
    }

    @Test(arguments: 0..<8)
    func validationDecodingAndLoadingAgreeOnMutatedConfigs(_ seed: UInt64) async throws {
        var random = SeededRandomNumberGenerator(seed: 0x5EED_0000 + seed)
        let base = try Fixture.seedJSON
        for round in 0..<400 {
            if round % 20 == 0 { await Task.yield() }  // share the two cooperative threads
            var json = base
            for _ in 0...Int.random(in: 0..<5, using: &random) { json = Self.mutate(json, &random) }
            let problems = SurveyConfigValidator.validate(json)
            let load = SurveyConfig.load(json: json)
            let context = "seed \(seed) round \(round): \(json.jsonString(sortedKeys: true))"
            #expect(problems.count == load.problems.count + load.ignoredFields.count, "\(context)")
            let strict = Result { try SurveyConfig.from(json: json) }
            switch strict {
            case .success(let config):
                #expect(load.isValid && config == load.config, "\(context)")
            case .failure(let error):
                #expect(!load.isValid, "\(context)")
                #expect((error as? SurveyConfigError)?.problems == load.problems, "\(context)")
            }
            // What lenient loading keeps is itself a clean config, with unique ids.
            #expect(SurveyConfigValidator.validate(load.config.json).isEmpty, "\(context)")
            #expect(Set(load.config.surveys.map(\.id)).count == load.config.surveys.count, "\(context)")
            if load.isUsable, let declared = json["surveys"]?.arrayValue {
                #expect(load.config.surveys.count + load.rejectedSurveys.count == declared.count, "\(context)")
            }
            // The compiled index and the reference matcher agree on a random event.
            let index = SurveyRuleIndex(config: load.config)
            let properties = (Self.randomValue(&random, depth: 1).objectValue ?? [:]).merging([
                "amount": Self.interesting.randomElement(using: &random)!
            ]) { $1 }
            for name in Set(load.config.surveys.map(\.trigger.event.name)) {
                let reference = load.config.surveys.indices.filter {
                    load.config.surveys[$0].trigger.event.matches(name: name, properties: properties)
                }
                #expect(index.matchingRules(name: name, properties: properties) == reference, "\(context)")
            }
        }
    }

    @Test(arguments: 0..<4)
    func anyBytesDecodeOrFailWithoutCrashing(_ seed: UInt64) async throws {
        var random = SeededRandomNumberGenerator(seed: 0xB17E_0000 + seed)
        let seedBytes = try Fixture.seedBytes
        for round in 0..<500 {
            if round % 20 == 0 { await Task.yield() }
            var bytes = seedBytes
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            case 1: bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
            case 2:
                let at = Int.random(in: 0..<bytes.count, using: &random)
                bytes.insert(contentsOf: Array("{[\"\\,:".utf8).shuffled(using: &random).prefix(3), at: at)
            default:
                bytes = (0..<Int.random(in: 0..<64, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            }
            let load = SurveyConfig.load(bytes: bytes)
            let viaDecoder = try? JSONDecoder().decode(SurveyConfig.self, from: Data(bytes))
            let strict = try? SurveyConfig.from(bytes: bytes)
            #expect(
                strict == viaDecoder || viaDecoder == nil,
                "JSONDecoder may refuse what it cannot read, never accept more")
            if let strict { #expect(strict == load.config && load.isValid) }
            _ = SurveyConfigValidator.validate(bytes: bytes)
        }
    }
}
