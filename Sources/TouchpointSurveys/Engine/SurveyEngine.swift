import Foundation
import Logging
import TouchpointCore
import TouchpointEvents

/// Shows the right survey at the right moment: it watches every recorded event, matches it
/// against the config's rules, applies gating, asks a ``SurveyPresenter`` to show the chosen
/// survey, and records `survey_presented`, `survey_response` and `survey_dismissed` back
/// into the recorder.
///
/// ```swift
/// let engine = SurveyEngine(config: config, presenter: TerminalSurveyPresenter())
/// EventRecorder.shared.record("checkout_success", properties: ["amount": 120])  // → survey shown
/// ```
///
/// **Never in the way of `record`.** The engine is an ``EventConsumer``: its callback runs
/// under the recorder's lock, so it only looks the event's name up in a ``SurveyRuleIndex``
/// (an event no rule names costs one dictionary miss) and, on a match, hands the event to the
/// engine's own task. Gating, the gating files, the presenter and the engine's own events all
/// happen there.
///
/// **Gating** is a ``SurveyGate``; each user's history is kept in `<recorder.directory>/state/surveys/`
/// (``SurveyGatingStore``) and survives relaunches. A corrupt file is reported in
/// ``stateErrors`` and through the logger, and ignored.
///
/// **Live config.** ``update(config:)`` swaps the rules at once; an engine created with a
/// ``SurveyConfigManager`` follows every config the manager accepts. The engine runs from
/// creation until ``stop()``.
public final class SurveyEngine: EventConsumer, Sendable {
    enum Message: Sendable {
        case trigger(Event, [SurveyRule])
        case delayEnded(String)
        case ended(UUID, SurveyOutcome)
        case barrier(CheckedContinuation<Void, Never>)
    }

    struct State {
        var config: SurveyConfig
        var index: SurveyRuleIndex
        var gate: SurveyGate
        var current: SurveyPresentation?
        var stateErrors: [SurveyStateError] = []
        var stopped = false
        var delays: [String: Task<Void, Never>] = [:]
        var follower: Task<Void, Never>?
    }

    /// The recorder whose events the engine watches and into which it records.
    public let recorder: EventRecorder
    /// Where surveys are shown.
    public let presenter: any SurveyPresenter
    /// Time, storage and logging.
    public let options: Options
    /// The gating files.
    public let store: SurveyGatingStore

    let state: Locked<State>
    let inbox: AsyncStream<Message>.Continuation

    /// Creates an engine and starts it: from now on, every event `recorder` records is matched.
    /// - Parameters:
    ///   - config: the survey rules.
    ///   - recorder: the recorder to watch (``EventRecorder/shared`` by default).
    ///   - presenter: where surveys are shown.
    ///   - options: clock, gating directory, delay, logger.
    public init(
        config: SurveyConfig,
        recorder: EventRecorder = .shared,
        presenter: any SurveyPresenter,
        options: Options = Options()
    ) {
        self.recorder = recorder
        self.presenter = presenter
        self.options = options
        store = options.stateDirectory.map(SurveyGatingStore.init(directory:)) ?? SurveyGatingStore(recorder: recorder)
        state = Locked(
            State(
                config: config, index: SurveyRuleIndex(config: config),
                gate: SurveyGate(globalCooldownSeconds: config.globalCooldownSeconds)))
        let (messages, inbox) = AsyncStream.makeStream(of: Message.self)
        self.inbox = inbox
        recorder.addConsumer(self)
        Task { for await message in messages { self.handle(message) } }
    }

    /// Creates an engine that follows a manager: it starts with the manager's config and
    /// switches to every config the manager accepts later, without a restart.
    /// - Parameters:
    ///   - manager: the source of configs.
    ///   - recorder: the recorder to watch.
    ///   - presenter: where surveys are shown.
    ///   - options: clock, gating directory, delay, logger.
    public convenience init(
        manager: SurveyConfigManager,
        recorder: EventRecorder = .shared,
        presenter: any SurveyPresenter,
        options: Options = Options()
    ) {
        self.init(config: manager.config, recorder: recorder, presenter: presenter, options: options)
        let updates = manager.updates()
        let follower = Task { [weak self] in
            for await config in updates { self?.update(config: config) }
        }
        state.withLock { $0.follower = follower }
    }

    // MARK: Reading

    /// The config in use.
    public var config: SurveyConfig { state.withLock { $0.config } }

    /// The survey on screen, if any.
    public var currentPresentation: SurveyPresentation? { state.withLock { $0.current } }

    /// The gating state: histories seen so far, pending delays, the survey on screen.
    public var gate: SurveyGate { state.withLock { $0.gate } }

    /// Problems with gating files since the engine started (each also logged).
    public var stateErrors: [SurveyStateError] { state.withLock { $0.stateErrors } }

    /// Whether ``stop()`` was called.
    public var isStopped: Bool { state.withLock { $0.stopped } }

    // MARK: Controlling

    /// Replaces the rules at once. A survey on screen stays; a pending delay of a survey the
    /// new config lacks ends without showing it.
    public func update(config: SurveyConfig) {
        let index = SurveyRuleIndex(config: config)
        state.withLock { state in
            state.config = config
            state.index = index
            state.gate.globalCooldownSeconds = config.globalCooldownSeconds
        }
        options.logger.info("survey config updated", metadata: ["surveys": "\(config.surveys.count)"])
    }

    /// Returns once every event recorded before the call has been evaluated, and every answer
    /// or dismissal reported before the call has been recorded. Pending delays are not waited for.
    public func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            if case .terminated = inbox.yield(.barrier(continuation)) { continuation.resume() }
        }
    }

    /// Stops the engine: it stops watching events, cancels pending delays, dismisses the survey
    /// on screen (recording `survey_dismissed`) and ends its task. Call it from outside a
    /// recorder callback.
    public func stop() {
        let (current, delays, follower): (SurveyPresentation?, [Task<Void, Never>], Task<Void, Never>?) =
            state.withLock { state in
                guard !state.stopped else { return (nil, [], nil) }
                state.stopped = true
                defer {
                    state.current = nil
                    state.delays.removeAll()
                    state.follower = nil
                    state.gate.reset()
                }
                return (state.current, Array(state.delays.values), state.follower)
            }
        recorder.removeConsumer(self)
        for task in delays { task.cancel() }
        follower?.cancel()
        if let current {
            // The engine's task ignores this presentation from now on: its outcome (an answer
            // not yet recorded, or the dismissal that stopping causes) is recorded here.
            current.dismiss()
            recordOutcome(current.outcome ?? .dismissed, of: current.survey)
        }
        inbox.finish()
    }

    // MARK: EventConsumer

    /// Matches a recorded event (called by the recorder, under its lock): a dictionary lookup,
    /// and on a match a hand-off to the engine's task.
    public func eventRecorder(_ recorder: EventRecorder, didRecord event: Event, attachment: (any Sendable)?) {
        let matched: [SurveyRule] = state.withLock { state in
            guard !state.stopped else { return [] }
            let positions = state.index.matchingRules(for: event)
            return positions.isEmpty ? [] : positions.map { state.index.rules[$0] }
        }
        if !matched.isEmpty { inbox.yield(.trigger(event, matched)) }
    }
}
