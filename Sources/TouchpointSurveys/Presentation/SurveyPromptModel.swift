import Foundation
import TouchpointCore
import TouchpointEvents

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

/// The presenter behind `SurveyTriggerView`: it holds the survey on screen for a SwiftUI sheet,
/// and runs the engine that decides what to show.
///
/// Platform-neutral and tested on Linux; the SwiftUI view only renders ``current`` and
/// forwards the user's taps to it (``SurveyPresentation/choose(_:)``,
/// ``SurveyPresentation/submit(text:)``, ``SurveyPresentation/dismiss()``).
///
/// ```swift
/// let model = SurveyPromptModel()
/// model.start(config: config)          // watches EventRecorder.shared
/// // … model.current becomes a presentation when a rule fires; the sheet shows it.
/// model.stop()
/// ```
public final class SurveyPromptModel: SurveyPresenter, ObservableObject, @unchecked Sendable {
    // Safe: every mutable field is in `state` (a lock); `objectWillChange` is a Combine (or
    // OpenCombine) publisher, which synchronises its own subscribers and sends.

    private struct State {
        var current: SurveyPresentation?
        var engine: SurveyEngine?
    }

    /// Sent before ``current`` changes, for SwiftUI.
    public let objectWillChange = ObservableObjectPublisher()
    private let notificationQueue: DispatchQueue?
    private let state = Locked(State())

    /// Creates a model.
    /// - Parameter notificationQueue: the queue `objectWillChange` is sent on (main by default);
    ///   nil sends it on the thread that made the change.
    public init(notificationQueue: DispatchQueue? = .main) {
        self.notificationQueue = notificationQueue
    }

    /// The survey to show, or nil.
    public var current: SurveyPresentation? { state.withLock { $0.current } }

    /// The engine started by ``start(config:recorder:options:)``, if running.
    public var engine: SurveyEngine? { state.withLock { $0.engine } }

    /// Starts an engine on `recorder` with this model as its presenter; does nothing when one
    /// is already running.
    /// - Parameters:
    ///   - config: the survey rules.
    ///   - recorder: the recorder to watch.
    ///   - options: the engine's clock, gating directory and logger.
    public func start(config: SurveyConfig, recorder: EventRecorder = .shared, options: SurveyEngine.Options = .init())
    {
        start { SurveyEngine(config: config, recorder: recorder, presenter: self, options: options) }
    }

    /// Starts an engine that follows `manager`'s configs; does nothing when one is running.
    /// - Parameters:
    ///   - manager: the source of configs.
    ///   - recorder: the recorder to watch.
    ///   - options: the engine's clock, gating directory and logger.
    public func start(
        manager: SurveyConfigManager, recorder: EventRecorder = .shared, options: SurveyEngine.Options = .init()
    ) {
        start { SurveyEngine(manager: manager, recorder: recorder, presenter: self, options: options) }
    }

    /// Stops the engine (dismissing the survey on screen).
    public func stop() {
        state.withLock { state in
            defer { state.engine = nil }
            return state.engine
        }?.stop()
    }

    /// Dismisses the survey on screen (the sheet was swiped away).
    public func dismissCurrent() { current?.dismiss() }

    /// Shows a presentation: it becomes ``current`` until it ends.
    public func present(_ presentation: SurveyPresentation) {
        state.withLock { $0.current = presentation }
        sendWillChange()
        Task { [weak self] in
            _ = await presentation.waitForOutcome()
            self?.ended(presentation)
        }
    }

    private func start(_ makeEngine: () -> SurveyEngine) {
        guard state.withLock({ $0.engine == nil }) else { return }
        let engine = makeEngine()
        let kept = state.withLock { state -> Bool in
            guard state.engine == nil else { return false }
            state.engine = engine
            return true
        }
        if !kept { engine.stop() }
    }

    private func ended(_ presentation: SurveyPresentation) {
        let changed = state.withLock { state -> Bool in
            guard state.current === presentation else { return false }
            state.current = nil
            return true
        }
        if changed { sendWillChange() }
    }

    private func sendWillChange() {
        guard let notificationQueue else { return objectWillChange.send() }
        notificationQueue.async { self.objectWillChange.send() }
    }
}
