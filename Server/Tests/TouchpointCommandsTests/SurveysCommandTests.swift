import Foundation
import Testing
import Touchpoint
import TouchpointTesting

/// `touchpoint surveys validate|simulate`, run as a user runs them.
struct SurveyCommandLineTests {
    static func touchpoint(_ arguments: [String]) async throws -> ChildProcess.Result {
        let result = try await ChildProcess.run(ChildProcess.builtProduct("touchpoint"), arguments, timeout: 60)
        #expect(!result.timedOut)
        return result
    }

    @Test func schemaPrintsTheRepositorysSurveySchema() async throws {
        let result = try await Self.touchpoint(["surveys", "schema"])
        #expect(result.status == 0)
        // The file at the repository root, as the seed's `"$schema": "./survey.schema.json"` and
        // `npx ajv-cli validate -s survey.schema.json` expect it.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("survey.schema.json")
        let file = try Data(contentsOf: root)
        #expect(Array(result.output.utf8) == Array(file))
        #expect(try JSONParser.parse(Array(file))["$schema"] == "http://json-schema.org/draft-07/schema#")
    }

    @Test func validateAcceptsTheSeedsConfig() async throws {
        let result = try await Self.touchpoint(["surveys", "validate", try Fixture.seedURL.path])
        #expect(result.status == 0)
        #expect(result.output.hasSuffix("seed-survey.json: valid (2 surveys)\n"))
    }

    @Test func validateListsEveryProblemWithItsPathAndExitsOne() async throws {
        let directory = try TemporaryDirectory()
        var text = String(decoding: try Fixture.seedBytes, as: UTF8.self)
        text = text.replacingOccurrences(of: #""op": "gt", "value": 100"#, with: #""op": "gtt", "value": 100"#)
        text = text.replacingOccurrences(
            of: #""oncePerUser": false,"#, with: #""oncePerUser": "no", "oncePerSesion": true,"#)
        let file = directory.appending("survey.json")
        try Data(text.utf8).write(to: file)
        let result = try await Self.touchpoint(["surveys", "validate", file.path])
        #expect(result.status == 1)
        #expect(
            result.output == """
                \(file.path): 3 problems
                  surveys[0].oncePerSesion: unknown field
                  surveys[0].oncePerUser: expected a boolean, found string
                  surveys[1].trigger.event.properties.amount.op: unknown operator "gtt"

                """)
        let json = try await Self.touchpoint(["surveys", "validate", "--json", file.path])
        #expect(json.status == 1)
        let report = try JSONParser.parse(json.output)
        #expect(report["valid"] == false)
        #expect(report["problems"]?[2]?["path"] == "surveys[1].trigger.event.properties.amount.op")
        #expect(report["surveys"] == 0, "both surveys have a problem: none would load")
    }

    @Test func validateNamesTheLineOfASyntaxErrorAndMissingFiles() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.appending("broken.json")
        try Data("{\n  \"surveys\": [\n    {\"id\": }\n  ]\n}".utf8).write(to: file)
        let result = try await Self.touchpoint(["surveys", "validate", file.path])
        #expect(result.status == 1)
        #expect(result.output.contains("(line 3, column 12)"))
        let missing = try await Self.touchpoint(["surveys", "validate", directory.appending("nope.json").path])
        #expect(missing.status != 0)
        #expect(missing.errors.contains("cannot read"))
    }

    @Test func simulateReplaysARecordedLog() async throws {
        let fixture = try RecorderFixture()
        let spring: [String: JSONValue] = ["amount": 120, "coupon": "SPRING", "utm": "spring_sale"]
        await fixture.recorder.startSession(userID: "u1")
        fixture.recorder.record("checkout_success", properties: spring)
        fixture.clock.advance(by: 60)
        fixture.recorder.record("checkout_success", properties: ["amount": 40])
        fixture.clock.advance(by: 60)
        fixture.recorder.record("checkout_success", properties: spring)
        fixture.clock.advance(by: 3600)
        await fixture.recorder.startSession(userID: "u2")
        fixture.recorder.record("checkout_success", properties: spring)
        await fixture.recorder.endSession()

        let exported = try await Self.touchpoint(["events", "list", "--json", "--dir", fixture.directory.path])
        #expect(exported.status == 0)
        let events = fixture.directory.appending("events.jsonl")
        try Data((exported.output + "this line is not an event\n").utf8).write(to: events)
        let config = try Fixture.seedURL.path

        let human = try await Self.touchpoint(["surveys", "simulate", "--config", config, "--events", events.path])
        #expect(human.status == 0, "\(human.errors)")
        #expect(human.output.contains("Replaying 4 events through 2 surveys (a shown survey is answered at once)."))
        #expect(
            human.output.contains(
                "  shown      ask_rating\n  not shown  open_feedback: an earlier rule was chosen (ask_rating)"))
        #expect(human.output.contains("  not shown  ask_rating: no match: amount 40 is not gt 50"))
        #expect(
            human.output.contains(
                "  shown      open_feedback\n  not shown  ask_rating: already shown this session (oncePerSession)"))
        #expect(human.output.contains("ask_rating     2      0          noMatch 1, oncePerSession 1"))
        #expect(human.errors.contains("events.jsonl:5: not an event"))

        let json = try await Self.touchpoint([
            "surveys", "simulate", "--config", config, "--events", events.path, "--user", "u2", "--json",
        ])
        #expect(json.status == 0)
        let simulation = try JSONParser.parse(json.output)
        #expect(simulation["events"] == 1)
        #expect(simulation["timeline"]?[0]?["shown"] == "ask_rating")
        #expect(simulation["timeline"]?[0]?["user"] == "u2")
    }

    @Test func simulateRefusesAnUnusableConfigAndWarnsAboutDroppedSurveys() async throws {
        let directory = try TemporaryDirectory()
        let events = directory.appending("events.jsonl")
        try Data().write(to: events)
        let unusable = directory.appending("unusable.json")
        try Data(#"{"surveys": "all"}"#.utf8).write(to: unusable)
        let refused = try await Self.touchpoint([
            "surveys", "simulate", "--config", unusable.path, "--events", events.path,
        ])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("surveys: expected an array, found string"))

        let partial = directory.appending("partial.json")
        try Data(
            #"{"surveys": [{"id": "bad", "title": "T", "message": "M", "options": ["A"], "trigger": {"event": {"name": ""}}}, {"id": "ok", "title": "T", "message": "M", "options": ["A"], "trigger": {"event": {"name": "e"}}}]}"#
                .utf8
        ).write(to: partial)
        let warned = try await Self.touchpoint([
            "surveys", "simulate", "--config", partial.path, "--events", events.path,
        ])
        #expect(warned.status == 0)
        #expect(warned.errors.contains("warning: survey \"bad\" is malformed and left out"))
        #expect(warned.errors.contains("surveys[0].trigger.event.name: must not be empty"))
        #expect(warned.output.contains("No event triggered a survey rule."))
    }
}
