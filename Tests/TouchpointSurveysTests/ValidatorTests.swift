import Foundation
import Testing
import Touchpoint

/// The one validator: every problem, each with its JSON path; and lenient loading, which keeps
/// the good surveys of a config with a bad one.
struct ValidatorTests {
    /// A valid survey to break one field of at a time.
    static let base: [String: JSONValue] = [
        "id": "s", "title": "T", "message": "M",
        "response": ["type": "options", "options": ["A", "B"]],
        "trigger": ["event": ["name": "done"]],
    ]

    static func config(_ change: (inout [String: JSONValue]) -> Void) -> JSONValue {
        var survey = base
        change(&survey)
        return ["surveys": [.object(survey)]]
    }

    /// (what, config, every expected problem)
    static let cases: [(String, JSONValue, [String])] = [
        ("not an object", [1, 2], ["$: expected an object, found array"]),
        ("no surveys", [:], ["surveys: required field is missing"]),
        ("surveys not an array", ["surveys": "all"], ["surveys: expected an array, found string"]),
        ("survey not an object", ["surveys": [3]], ["surveys[0]: expected an object, found number"]),
        (
            "missing id, title, message, trigger",
            ["surveys": [["options": ["A"]]]],
            [
                "surveys[0].id: required field is missing", "surveys[0].title: required field is missing",
                "surveys[0].message: required field is missing", "surveys[0].trigger: required field is missing",
            ]
        ),
        ("empty id", config { $0["id"] = "" }, ["surveys[0].id: must not be empty"]),
        ("id not a string", config { $0["id"] = 7 }, ["surveys[0].id: expected a string, found number"]),
        (
            "no response nor options", config { $0["response"] = nil },
            ["surveys[0].response: required field is missing (or give the legacy \"options\")"]
        ),
        (
            "unknown response type", config { $0["response"] = ["type": "stars"] },
            ["surveys[0].response.type: unknown response type \"stars\" (expected \"options\" or \"text\")"]
        ),
        (
            "options response without options", config { $0["response"] = ["type": "options"] },
            ["surveys[0].response.options: required field is missing"]
        ),
        (
            "empty options", config { $0["response"] = ["type": "options", "options": []] },
            ["surveys[0].response.options: expected at least one option"]
        ),
        (
            "duplicate and empty options",
            config { $0["response"] = ["type": "options", "options": ["A", "A", "", 4]] },
            [
                "surveys[0].response.options[1]: duplicate option \"A\"",
                "surveys[0].response.options[2]: an option must not be empty",
                "surveys[0].response.options[3]: expected a string, found number",
            ]
        ),
        (
            "text limits",
            config { $0["response"] = ["type": "text", "minLength": -1, "maxLength": 0.5, "allowEmpty": "no"] },
            [
                "surveys[0].response.allowEmpty: expected a boolean, found string",
                "surveys[0].response.minLength: expected an integer of at least 0, found -1",
                "surveys[0].response.maxLength: expected an integer of at least 1, found 0.5",
            ]
        ),
        (
            "maxLength below minLength", config { $0["response"] = ["type": "text", "minLength": 10, "maxLength": 5] },
            ["surveys[0].response.maxLength: maxLength 5 is less than minLength 10"]
        ),
        (
            "options field on a text response", config { $0["response"] = ["type": "text", "options": ["A"]] },
            ["surveys[0].response.options: unknown field"]
        ),
        (
            "bad gating fields",
            config {
                $0["oncePerSession"] = "yes"
                $0["cooldownSeconds"] = -5
                $0["sampleRate"] = 1.5
                $0["delaySeconds"] = 100_000
            },
            [
                "surveys[0].oncePerSession: expected a boolean, found string",
                "surveys[0].cooldownSeconds: expected a number of seconds from 0 to 3153600000, found -5",
                "surveys[0].delaySeconds: expected a number of seconds from 0 to 86400, found 100000",
                "surveys[0].sampleRate: expected a number from 0 to 1, found 1.5",
            ]
        ),
        (
            "trigger without event", config { $0["trigger"] = [:] },
            ["surveys[0].trigger.event: required field is missing"]
        ),
        (
            "empty event name", config { $0["trigger"] = ["event": ["name": ""]] },
            ["surveys[0].trigger.event.name: must not be empty"]
        ),
        (
            "unknown operator",
            config {
                $0["trigger"] = ["event": ["name": "x", "properties": ["amount": ["op": "gtt", "value": 100]]]]
            },
            ["surveys[0].trigger.event.properties.amount.op: unknown operator \"gtt\""]
        ),
        (
            "operator values",
            config {
                $0["trigger"] = [
                    "event": [
                        "name": "x",
                        "properties": [
                            "a": ["op": "gt", "value": "10"], "b": ["op": "contains", "value": 3],
                            "c": ["op": "exists", "value": true],
                            "d": ["op": "eq"], "e": ["value": 1], "f": .null, "g": [1, 2],
                            "h": ["op": "ne", "value": [1]],
                            "key with space": ["op": "lt", "value": 1, "extra": 0],
                        ],
                    ]
                ]
            },
            [
                "surveys[0].trigger.event.properties.a.value: gt compares with a number, found string",
                "surveys[0].trigger.event.properties.b.value: contains compares with a string, found number",
                "surveys[0].trigger.event.properties.c.value: exists takes no value",
                "surveys[0].trigger.event.properties.d.value: required field is missing (eq compares with a string, number or boolean)",
                "surveys[0].trigger.event.properties.e.op: required field is missing (an operator object needs \"op\")",
                "surveys[0].trigger.event.properties.f: expected a string, number, boolean or {\"op\": …} object, found null",
                "surveys[0].trigger.event.properties.g: expected a string, number, boolean or {\"op\": …} object, found array",
                "surveys[0].trigger.event.properties.h.value: ne compares with a string, number or boolean, found array",
                "surveys[0].trigger.event.properties[\"key with space\"].extra: unknown field",
            ]
        ),
        (
            "duplicate ids",
            ["surveys": [.object(base), .object(base)]],
            ["surveys[1].id: duplicate survey id \"s\" (also surveys[0])"]
        ),
        (
            "bad global cooldown", ["surveys": [], "globalCooldownSeconds": true],
            ["globalCooldownSeconds: expected a number of seconds from 0 to 3153600000, found true"]
        ),
    ]

    @Test(arguments: cases.indices)
    func everyProblemIsNamedByItsPath(_ index: Int) {
        let (what, json, expected) = Self.cases[index]
        #expect(SurveyConfigValidator.validate(json).map(\.description) == expected, "\(what)")
    }

    @Test func theValidatorIsAPlainFunctionOfJSON() throws {
        let check: (JSONValue) -> [JSONProblem] = SurveyConfigValidator.validate
        #expect(check(try Fixture.seedJSON).isEmpty)
        #expect(SurveyConfigValidator.validate(bytes: Array("{\"surveys\":".utf8)).map(\.path) == [.root])
        #expect(SurveyConfigValidator.validate(bytes: try Fixture.seedBytes).isEmpty)
    }

    @Test func aMalformedSurveyIsDroppedAndTheOthersKept() throws {
        let good1 = Self.base.merging(["id": "first"]) { $1 }
        var bad = Self.base.merging(["id": "broken"]) { $1 }
        bad["trigger"] = ["event": ["name": "x", "properties": ["amount": ["op": "gtt", "value": 100]]]]
        let good2 = Self.base.merging(["id": "third"]) { $1 }
        let load = SurveyConfig.load(json: ["surveys": [.object(good1), .object(bad), .object(good2)]])
        #expect(load.isUsable)
        #expect(!load.isValid)
        #expect(load.config.surveys.map(\.id) == ["first", "third"])
        #expect(load.rejectedSurveys.map(\.index) == [1])
        #expect(load.rejectedSurveys.first?.id == "broken")
        #expect(
            load.problems.map(\.description) == [
                "surveys[1].trigger.event.properties.amount.op: unknown operator \"gtt\""
            ])
    }

    @Test func theSecondOfTwoSurveysWithOneIdIsDropped() {
        let load = SurveyConfig.load(json: [
            "surveys": [.object(Self.base), .object(Self.base.merging(["title": "other"]) { $1 })]
        ])
        #expect(load.config.surveys.map(\.title) == ["T"])
        #expect(load.rejectedSurveys.map(\.index) == [1])
    }

    @Test(arguments: [
        (#"not json"#, false),
        (#"{"surveys": {}}"#, false),
        (#"{"surveys": [], "globalCooldownSeconds": -1}"#, false),
        (#"{"surveys": [{"id": ""}]}"#, false),
        (#"{"surveys": []}"#, true),
        (
            #"{"surveys": [1, {"id":"a","title":"","message":"","options":["x"],"trigger":{"event":{"name":"e"}}}]}"#,
            true
        ),
    ])
    func usableMeansASoundTopLevelAndAtLeastOneGoodSurvey(_ text: String, _ usable: Bool) {
        #expect(SurveyConfig.load(bytes: Array(text.utf8)).isUsable == usable, "\(text)")
    }
}
