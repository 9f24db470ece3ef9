import Benchmark
import Foundation
import Touchpoint
import TouchpointTesting

/// Dismisses whatever it is shown (no rule matches in these benchmarks; it is never asked).
final class DismissingPresenter: SurveyPresenter {
    func present(_ presentation: SurveyPresentation) { presentation.dismiss() }
}

func rule(_ id: String, on name: String, properties: [String: PropertyMatcher]) -> SurveyRule {
    SurveyRule(
        id: id, title: "T", message: "M", response: .options(["A", "B"]),
        trigger: TriggerCondition(event: EventTrigger(name: name, properties: properties)))
}

/// 1,000 rules, each on its own event name, none of them `checkout_success`.
let otherNames = SurveyConfig(
    surveys: (0..<1000).map { rule("r\($0)", on: "event_\($0)", properties: ["amount": PropertyMatcher(.gt, 50)]) })

/// 100 rules on `checkout_success` with three conditions each: the first two hold, the last
/// (a substring test, the dearest) fails, so every condition of every rule is evaluated.
let sameName = SurveyConfig(
    surveys: (0..<100).map {
        rule(
            "r\($0)", on: "checkout_success",
            properties: [
                "amount": PropertyMatcher(.gt, .int($0)), "plan": .equals("pro"),
                "utm": PropertyMatcher(.contains, .string("campaign-\($0)-")),
            ])
    })

let event = Event(
    name: "checkout_success", sessionId: UUID(), userId: "u1", anonymousId: "install",
    properties: ["amount": 120, "plan": "pro", "utm": "spring_sale_newsletter", "coupon": "SPRING"])

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(5))

    for (label, config) in [("1,000 rules on other names", otherNames), ("100 rules on the same name", sameName)] {
        Benchmark("index, \(label)", configuration: .init(scalingFactor: .kilo)) { benchmark in
            let index = SurveyRuleIndex(config: config)
            precondition(index.matchingRules(for: event).isEmpty)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(index.matchingRules(for: event)) }
        }

        // The engine's recorder callback: its lock, the index, no hand-off (nothing matches).
        Benchmark("engine callback, \(label)", configuration: .init(scalingFactor: .kilo)) { benchmark in
            let directory = try TemporaryDirectory(prefix: "bench-surveys")
            let recorder = EventRecorder(directory: directory.url)
            let engine = SurveyEngine(config: config, recorder: recorder, presenter: DismissingPresenter())
            defer { engine.stop() }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { engine.eventRecorder(recorder, didRecord: event, attachment: nil) }
        }
    }
}
