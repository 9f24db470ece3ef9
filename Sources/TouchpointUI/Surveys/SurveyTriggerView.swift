#if canImport(SwiftUI)
import SwiftUI
import TouchpointEvents
import TouchpointSurveys

/// Wraps app content and shows a survey sheet when a recorded event triggers one of the
/// config's rules.
///
/// ```swift
/// SurveyTriggerView(config: config) {
///     AppContent()
/// }
/// ```
///
/// The view only renders: the engine (``SurveyEngine``, started by ``SurveyPromptModel``)
/// decides what to show, and the presentation validates text and records the answer.
public struct SurveyTriggerView<Content: View>: View {
    private enum Source {
        case config(SurveyConfig)
        case manager(SurveyConfigManager)
    }

    private let source: Source
    private let recorder: EventRecorder
    private let content: Content
    @StateObject private var model = SurveyPromptModel()

    /// Shows surveys from a fixed config.
    /// - Parameters:
    ///   - config: the survey rules.
    ///   - recorder: the recorder whose events trigger surveys (``EventRecorder/shared``).
    ///   - content: the app content the sheet appears over.
    public init(config: SurveyConfig, recorder: EventRecorder = .shared, @ViewBuilder content: () -> Content) {
        self.source = .config(config)
        self.recorder = recorder
        self.content = content()
    }

    /// Shows surveys from ``SurveyConfigManager/shared``: the collector's, once the setup call
    /// `TouchpointSDK.start(writeKey:collector:)` has run; none before.
    /// - Parameters:
    ///   - recorder: the recorder whose events trigger surveys (``EventRecorder/shared``).
    ///   - content: the app content the sheet appears over.
    public init(recorder: EventRecorder = .shared, @ViewBuilder content: () -> Content) {
        self.source = SurveyConfigManager.shared.map { .manager($0) } ?? .config(SurveyConfig())
        self.recorder = recorder
        self.content = content()
    }

    /// Shows surveys from a manager's config, switching live when it changes.
    /// - Parameters:
    ///   - manager: the source of configs.
    ///   - recorder: the recorder whose events trigger surveys (``EventRecorder/shared``).
    ///   - content: the app content the sheet appears over.
    public init(
        manager: SurveyConfigManager, recorder: EventRecorder = .shared, @ViewBuilder content: () -> Content
    ) {
        self.source = .manager(manager)
        self.recorder = recorder
        self.content = content()
    }

    public var body: some View {
        content
            .sheet(item: presentation) { presentation in
                SurveySheet(presentation: presentation)
            }
            .onAppear {
                switch source {
                case .config(let config): model.start(config: config, recorder: recorder)
                case .manager(let manager): model.start(manager: manager, recorder: recorder)
                }
            }
            .onDisappear { model.stop() }
    }

    /// The sheet's item: the model's presentation; closing the sheet dismisses it.
    private var presentation: Binding<SurveyPresentation?> {
        Binding(
            get: { model.current },
            set: { newValue in
                if newValue == nil { model.dismissCurrent() }
            }
        )
    }
}
#endif
