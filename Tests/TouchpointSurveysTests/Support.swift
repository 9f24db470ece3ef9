import Foundation
import Testing
import Touchpoint
import TouchpointTesting

/// The seed's example config and small builders shared by the survey tests.
enum Fixture {
    /// The seed README's example config, byte for byte.
    static var seedURL: URL {
        get throws {
            try #require(Bundle.module.url(forResource: "seed-survey", withExtension: "json", subdirectory: "Fixtures"))
        }
    }

    static var seedBytes: [UInt8] {
        get throws { Array(try Data(contentsOf: seedURL)) }
    }

    static var seedJSON: JSONValue {
        get throws { try JSONParser.parse(seedBytes) }
    }

    /// The same instant ManualClock starts at.
    static let start = Date(timeIntervalSince1970: 1_767_225_600)

    static func event(
        _ name: String,
        _ properties: [String: JSONValue] = [:],
        user: String? = "u1",
        session: UUID = sessionA,
        at seconds: TimeInterval = 0
    ) -> Event {
        Event(
            name: name, timestamp: start.addingTimeInterval(seconds), sessionId: session, userId: user,
            anonymousId: "install-1", properties: properties)
    }

    static let sessionA = UUID(uuidString: "00000000-0000-7000-8000-00000000000A")!
    static let sessionB = UUID(uuidString: "00000000-0000-7000-8000-00000000000B")!

    /// A rule on `event` with an options response.
    static func rule(
        _ id: String,
        on event: String = "checkout_success",
        properties: [String: PropertyMatcher]? = nil,
        oncePerSession: Bool = true,
        oncePerUser: Bool = false,
        cooldown: TimeInterval? = nil,
        delay: TimeInterval? = nil,
        sampleRate: Double? = nil,
        response: SurveyResponse = .options(["Great", "Okay", "Poor"])
    ) -> SurveyRule {
        SurveyRule(
            id: id, title: "Title of \(id)", message: "Message of \(id)", response: response,
            trigger: TriggerCondition(event: EventTrigger(name: event, properties: properties)),
            oncePerSession: oncePerSession, oncePerUser: oncePerUser, cooldownSeconds: cooldown,
            delaySeconds: delay, sampleRate: sampleRate)
    }
}

/// The survey engine over a fixture's recorder and clock.
extension RecorderFixture {
    /// An engine on this recorder and clock that shows surveys to `presenter`.
    func engine(
        _ config: SurveyConfig, _ presenter: any SurveyPresenter,
        wait: @escaping @Sendable (TimeInterval) async -> Void = SurveyEngine.sleep
    ) -> SurveyEngine {
        SurveyEngine(config: config, recorder: recorder, presenter: presenter, options: engineOptions(wait: wait))
    }

    func engineOptions(wait: @escaping @Sendable (TimeInterval) async -> Void = SurveyEngine.sleep)
        -> SurveyEngine.Options
    {
        SurveyEngine.Options(clock: clock, wait: wait)
    }

    /// Every stored event as `name {sorted properties}` lines, oldest first.
    func log() -> [String] {
        recorder.reader.events().map { "\($0.name) \(JSONValue.object($0.properties).jsonString(sortedKeys: true))" }
    }

    func surveyLog() -> [String] { log().filter { $0.hasPrefix("survey_") } }
}

/// A scripted user: collects presentations and lets the test answer them.
final class ScriptedPresenter: SurveyPresenter {
    private let presentations: AsyncStream<SurveyPresentation>
    private let continuation: AsyncStream<SurveyPresentation>.Continuation
    let shown = Locked<[String]>([])

    init() { (presentations, continuation) = AsyncStream.makeStream(of: SurveyPresentation.self) }

    func present(_ presentation: SurveyPresentation) {
        shown.withLock { $0.append(presentation.survey.id) }
        continuation.yield(presentation)
    }

    /// The next presentation, or nil after `seconds`.
    func next(within seconds: Double = 60) async -> SurveyPresentation? {
        let stream = presentations
        return await withTimeout(seconds) {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        } ?? nil
    }
}

/// A delay the test ends by hand: `wait` suspends until `releaseAll` (or cancellation).
final class ManualWait: Sendable {
    private struct State {
        var requests: [TimeInterval] = []
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var next = 0
    }

    private let state = Locked(State())

    /// The delays asked for so far.
    var requests: [TimeInterval] { state.withLock { $0.requests } }

    var wait: @Sendable (TimeInterval) async -> Void {
        { [state] seconds in
            let id = state.withLock { state in
                state.next += 1
                return state.next
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let cancelled = state.withLock { state -> Bool in
                        state.requests.append(seconds)
                        if Task.isCancelled { return true }
                        state.waiters[id] = continuation
                        return false
                    }
                    if cancelled { continuation.resume() }
                }
            } onCancel: {
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
            }
        }
    }

    /// Ends every delay waiting now; returns how many.
    @discardableResult
    func releaseAll() -> Int {
        let all = state.withLock { state in
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in all { waiter.resume() }
        return all.count
    }

    /// Waits until `count` delays have been requested, at most `seconds`.
    func waitForRequests(_ count: Int, within seconds: Double = 60) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while requests.count < count {
            if Date() > deadline { return false }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        return true
    }
}
