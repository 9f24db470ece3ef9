import Foundation
import Testing
import Touchpoint
import TouchpointTesting

/// Whether Python's `jsonschema` can run here (or CI requires it to).
enum JSONSchemaValidator {
    static let runs: Bool = {
        if ProcessInfo.processInfo.environment["TOUCHPOINT_REQUIRE_JSONSCHEMA"] == "1" { return true }
        guard let python = ChildProcess.onPath("python3") else { return false }
        let probe = try? SpawnedProcess(python, ["-c", "import jsonschema"], output: .null, errors: .null)
        return probe?.waitUntilExit() == .exited(0)
    }()
}

/// `survey.schema.json` against a real JSON Schema validator (Python's `jsonschema`, run as a
/// child process), and against the Swift validator: they agree on every config here, except on
/// what a schema cannot express, which only the Swift validator checks.
///
/// They run wherever Python's `jsonschema` is importable, and always under
/// `TOUCHPOINT_REQUIRE_JSONSCHEMA=1` (set by `.ci/run`, which installs it), where its absence
/// fails them; so `swift test` works on a fresh machine and CI never skips them.
@Suite(.enabled(if: JSONSchemaValidator.runs, "needs python3 with jsonschema (pip install jsonschema)"))
struct SchemaTests {

    /// What only ``SurveyConfigValidator`` catches: unique survey ids, and `maxLength` not below
    /// `minLength` (relations between values, which draft-07 cannot state).
    static let swiftOnly: Set<String> = ["duplicate ids", "maxLength below minLength"]

    static let script = """
        import json, sys
        import jsonschema
        schema = json.load(open(sys.argv[1]))
        jsonschema.Draft7Validator.check_schema(schema)
        validator = jsonschema.Draft7Validator(schema)
        instances = json.load(open(sys.argv[2]))
        print(json.dumps([sorted(error.json_path for error in validator.iter_errors(i)) for i in instances]))
        """

    /// The schema's verdicts on `instances`: for each, the JSON paths of its errors.
    static func schemaErrors(_ instances: [JSONValue]) async throws -> [[String]] {
        let python = try #require(ChildProcess.onPath("python3"), "python3 is needed (.ci/run installs jsonschema)")
        let schema = try #require(SurveySchema.url, "survey.schema.json is a package resource")
        let directory = try TemporaryDirectory(prefix: "schema")
        let input = directory.appending("instances.json")
        try Data(JSONValue.array(instances).jsonBytes()).write(to: input)
        let result = try await ChildProcess.run(python, ["-c", script, schema.path, input.path], timeout: 60)
        try #require(result.status == 0, "python3 jsonschema failed: \(result.errors)")
        let verdicts = try JSONParser.parse(result.output)
        return try #require(verdicts.arrayValue).map { ($0.arrayValue ?? []).compactMap(\.stringValue) }
    }

    @Test func theSchemaShipsAsAResourceAndIsAValidSchema() async throws {
        let json = try JSONParser.parse(Array(SurveySchema.data()))
        #expect(json["$schema"] == "http://json-schema.org/draft-07/schema#")
        let surveyFields = try #require(json["definitions"]?["SurveyRule"]?["properties"]?.objectValue)
        #expect(
            Set(surveyFields.keys) == [
                "id", "title", "message", "options", "response", "trigger", "oncePerSession", "oncePerUser",
                "cooldownSeconds", "delaySeconds", "sampleRate",
            ])
        #expect(json["properties"]?["globalCooldownSeconds"] != nil)
        #expect(try await Self.schemaErrors([]) == [])
    }

    @Test func theSeedsExampleAndGoodConfigsValidate() async throws {
        var extended = try SurveyConfig.from(json: Fixture.seedJSON)
        extended.globalCooldownSeconds = 600
        extended.surveys[0].delaySeconds = 2
        extended.surveys[0].sampleRate = 0.5
        let good: [JSONValue] = [
            try Fixture.seedJSON, extended.json, ["surveys": []],
            [
                "surveys": [
                    ["id": "legacy", "title": "", "message": "", "options": ["A"], "trigger": ["event": ["name": "e"]]]
                ]
            ],
        ]
        let verdicts = try await Self.schemaErrors(good)
        #expect(verdicts == Array(repeating: [], count: good.count))
        for config in good { #expect(SurveyConfigValidator.validate(config).isEmpty) }
    }

    @Test func theSchemaAndTheSwiftValidatorAgreeOnBadConfigs() async throws {
        var cases = ValidatorTests.cases.map { ($0.0, $0.1) }
        cases.append(("unknown field", ValidatorTests.config { $0["oncePerSesion"] = true }))
        cases.append(("unknown top-level field", ["surveys": [], "version": 2]))
        let verdicts = try await Self.schemaErrors(cases.map(\.1))
        for ((what, json), schemaErrors) in zip(cases, verdicts) {
            let swiftProblems = SurveyConfigValidator.validate(json)
            #expect(!swiftProblems.isEmpty, "the Swift validator rejects \(what)")
            if Self.swiftOnly.contains(what) {
                #expect(schemaErrors.isEmpty, "the schema cannot express \(what), so it accepts it")
            } else {
                #expect(!schemaErrors.isEmpty, "the schema rejects \(what)")
            }
        }
    }
}

/// The schema has one copy: the package resource, which `survey.schema.json` at the repository
/// root links to, so the seed's `"$schema": "./survey.schema.json"` and
/// `npx ajv-cli validate -s survey.schema.json -d survey.json` find what the tests validate.
struct SchemaFileTests {
    @Test func theRepositoryRootsSchemaIsThePackageResource() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("survey.schema.json")
        #expect(try Data(contentsOf: root) == SurveySchema.data())
    }
}
