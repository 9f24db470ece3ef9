// The "Getting started with surveys" article's samples, as written; the test runs them with a
// recorder in a temporary directory.
import Foundation
import Testing
import TouchpointEvents
import TouchpointSurveys
import TouchpointTesting

private final class FirstOptionPresenter: SurveyPresenter {
    func present(_ presentation: SurveyPresentation) {
        if let first = presentation.options.first { _ = presentation.choose(first) }
    }
}

private let json = """
    {
      "surveys": [
        {
          "id": "ask_rating",
          "title": "Quick question",
          "message": "How would you rate your experience?",
          "response": { "type": "options", "options": ["Great", "Okay", "Poor"] },
          "oncePerUser": true,
          "trigger": {
            "event": { "name": "checkout_success", "properties": { "amount": { "op": "gt", "value": 50 } } }
          }
        }
      ]
    }
    """

private func showSample(recorder: EventRecorder) throws -> SurveyEngine {
    let config = try SurveyConfig.from(bytes: Array(json.utf8))
    let engine = SurveyEngine(config: config, recorder: recorder, presenter: FirstOptionPresenter())
    recorder.record("checkout_success", properties: ["amount": .int(120)])
    return engine
}

struct GettingStartedSampleTests {
    @Test func theArticlesConfigIsValid() {
        #expect(SurveyConfigValidator.validate(bytes: Array(json.utf8)).isEmpty)
    }

    @Test func theSurveyIsShownAndAnswered() async throws {
        let directory = try TemporaryDirectory()
        let recorder = EventRecorder(directory: directory.url)
        let engine = try showSample(recorder: recorder)
        defer { engine.stop() }
        await engine.waitUntilIdle()
        #expect(
            await eventually {
                await recorder.allEvents().contains { $0.name == "survey_response" }
            })
        let response = await recorder.allEvents().first { $0.name == "survey_response" }
        #expect(response?.properties["option"] == .string("Great"))
    }
}
