import Foundation
import Testing
import Touchpoint
import TouchpointTesting

/// Decoding the seed's config format: every field, the defaults, and the precedence rules.
struct ConfigDecodingTests {
    @Test func theSeedsExampleDecodesWithEveryField() throws {
        let config = try JSONDecoder().decode(SurveyConfig.self, from: Data(Fixture.seedBytes))
        #expect(config.surveys.map(\.id) == ["ask_rating", "open_feedback"])
        let rating = config.surveys[0]
        #expect(rating.title == "Quick question")
        #expect(rating.message == "How would you rate your experience?")
        #expect(rating.response == .options(["Great", "Okay", "Poor"]))
        #expect(rating.responseType == "options")
        #expect(rating.oncePerSession == true)
        #expect(rating.oncePerUser == false)
        #expect(rating.cooldownSeconds == 86_400)
        #expect(rating.trigger.event.name == "checkout_success")
        #expect(
            rating.trigger.event.properties == [
                "amount": PropertyMatcher(.gt, 50), "coupon": .exists, "utm": PropertyMatcher(.contains, "spring"),
            ])
        let feedback = config.surveys[1]
        #expect(
            feedback.response
                == .text(
                    SurveyTextResponse(
                        placeholder: "Share your thoughts…", submitLabel: "Send feedback", allowEmpty: false,
                        minLength: 5, maxLength: 500)))
        #expect(feedback.responseType == "text")
        // Defaults, as the seed's table gives them.
        #expect(feedback.oncePerSession == true)
        #expect(feedback.oncePerUser == false)
        #expect(feedback.cooldownSeconds == nil)
        #expect(feedback.delaySeconds == nil)
        #expect(feedback.sampleRate == nil)
        #expect(config.globalCooldownSeconds == nil)
    }

    @Test func fromURLReadsAFileAndNamesItInErrors() throws {
        let directory = try TemporaryDirectory()
        let good = directory.appending("survey.json")
        try Data(Fixture.seedBytes).write(to: good)
        #expect(try SurveyConfig.from(url: good).surveys.count == 2)

        let missing = directory.appending("missing.json")
        let unreadable = #expect(throws: SurveyConfigError.self) { try SurveyConfig.from(url: missing) }
        #expect(unreadable?.code == .unreadable)
        #expect(unreadable?.url == missing)

        let broken = directory.appending("broken.json")
        try Data(#"{"surveys": [}"#.utf8).write(to: broken)
        let invalid = #expect(throws: SurveyConfigError.self) { try SurveyConfig.from(url: broken) }
        #expect(invalid?.code == .invalidJSON)
        #expect(invalid?.description.contains("broken.json") == true)
        #expect(invalid?.description.contains("at byte 13") == true)
    }

    @Test func legacyOptionsBecomeAnOptionsResponse() throws {
        let config = try SurveyConfig.from(json: [
            "surveys": [
                [
                    "id": "legacy", "title": "T", "message": "M", "options": ["Yes", "No"],
                    "trigger": ["event": ["name": "done"]],
                ]
            ]
        ])
        #expect(config.surveys[0].response == .options(["Yes", "No"]))
        #expect(config.surveys[0].options == ["Yes", "No"])
    }

    @Test func responseWinsOverLegacyOptions() throws {
        let config = try SurveyConfig.from(json: [
            "surveys": [
                [
                    "id": "both", "title": "T", "message": "M", "options": ["Yes", "No"],
                    "response": ["type": "text", "allowEmpty": true],
                    "trigger": ["event": ["name": "done"]],
                ]
            ]
        ])
        #expect(config.surveys[0].response == .text(SurveyTextResponse(allowEmpty: true)))
        #expect(config.surveys[0].options == ["Yes", "No"])
    }

    @Test func touchpointsAdditionsDecode() throws {
        let config = try SurveyConfig.from(json: [
            "globalCooldownSeconds": 3600,
            "surveys": [
                [
                    "id": "later", "title": "T", "message": "M", "options": ["A"], "delaySeconds": 2.5,
                    "sampleRate": 0.25, "oncePerUser": true, "oncePerSession": false,
                    "trigger": ["event": ["name": "done", "properties": ["plan": "pro", "n": 3, "ok": true]]],
                ]
            ],
        ])
        #expect(config.globalCooldownSeconds == 3600)
        let rule = config.surveys[0]
        #expect(rule.delaySeconds == 2.5)
        #expect(rule.sampleRate == 0.25)
        #expect(rule.oncePerUser && !rule.oncePerSession)
        #expect(rule.trigger.event.properties == ["plan": .equals("pro"), "n": .equals(3), "ok": .equals(true)])
    }

    @Test func strictDecodingListsEveryProblemWithItsPath() throws {
        var json = try Fixture.seedJSON
        guard case .object(var root) = json, case .array(var surveys)? = root["surveys"],
            case .object(var second) = surveys[1], case .object(var first) = surveys[0]
        else { throw TestFailure("unexpected fixture shape") }
        second["trigger"] = [
            "event": ["name": "checkout_success", "properties": ["amount": ["op": "gtt", "value": 100]]]
        ]
        first["cooldownSeconds"] = "a day"
        surveys[0] = .object(first)
        surveys[1] = .object(second)
        root["surveys"] = .array(surveys)
        json = .object(root)
        let error = #expect(throws: SurveyConfigError.self) {
            try JSONDecoder().decode(SurveyConfig.self, from: Data(json.jsonBytes()))
        }
        #expect(error?.code == .invalidConfig)
        #expect(
            error?.problems.map(\.description) == [
                "surveys[0].cooldownSeconds: expected a number of seconds from 0 to 3153600000, found string",
                "surveys[1].trigger.event.properties.amount.op: unknown operator \"gtt\"",
            ])
    }

    @Test func unknownFieldsAreIgnoredWhenLoadingButReportedByTheValidator() throws {
        let json: JSONValue = [
            "surveys": [
                [
                    "id": "a", "title": "T", "message": "M", "options": ["A"], "oncePerSesion": false,
                    "trigger": ["event": ["name": "done"]], "futureField": ["x": 1],
                ]
            ]
        ]
        let config = try SurveyConfig.from(json: json)
        #expect(config.surveys[0].oncePerSession == true)
        let load = SurveyConfig.load(json: json)
        #expect(load.isValid)
        #expect(load.ignoredFields.map(\.description) == ["surveys[0].futureField", "surveys[0].oncePerSesion"])
        #expect(
            SurveyConfigValidator.validate(json).map(\.description) == [
                "surveys[0].futureField: unknown field", "surveys[0].oncePerSesion: unknown field",
            ])
    }

    /// The documented difference on repeated keys: JSONDecoder keeps the first, JSONParser the last.
    @Test func aRepeatedKeyIsReadDifferentlyByJSONDecoderAndJSONParser() throws {
        let text =
            #"{"surveys": [{"id": "a", "title": "first", "title": "last", "message": "M", "options": ["A"], "trigger": {"event": {"name": "e"}}}]}"#
        let viaDecoder = try JSONDecoder().decode(SurveyConfig.self, from: Data(text.utf8))
        let viaParser = try SurveyConfig.from(bytes: Array(text.utf8))
        #expect(viaDecoder.surveys[0].title == "first")
        #expect(viaParser.surveys[0].title == "last")
    }

    @Test func encodingRoundTripsThroughTheLoader() throws {
        let config = try SurveyConfig.from(json: Fixture.seedJSON)
        var withAdditions = config
        withAdditions.globalCooldownSeconds = 600
        withAdditions.surveys[1].delaySeconds = 1.5
        withAdditions.surveys[1].sampleRate = 0.5
        let data = try JSONEncoder().encode(withAdditions)
        let decoded = try JSONDecoder().decode(SurveyConfig.self, from: data)
        #expect(decoded == withAdditions)
        #expect(SurveyConfigValidator.validate(withAdditions.json).isEmpty)
    }
}
