import Foundation
import Logging

/// Records Segment's application lifecycle events (``AutomaticEvents``) into a recorder: decides
/// from the app's version history and its lifecycle what happened, on every platform; the Apple
/// glue (``UIKitAppLifecycle``) only reports the moments.
///
/// ```swift
/// let lifecycle = ApplicationLifecycleRecorder(recorder: recorder, application: .main)
/// lifecycle.launch(announcedLater: false)  // Installed or Updated, and Opened
/// lifecycle.handle(.didEnterBackground)    // Backgrounded
/// lifecycle.handle(.willEnterForeground)   // Opened, from_background true
/// lifecycle.openURL(url)                   // Deep Link Opened (the app is open already)
/// ```
///
/// **The URL that opened the app.** `Application Opened` carries `url` (and
/// `referring_application`) when a link opened the app: from UIKit's launch options, or, in an
/// app with scenes, from the URL the app forwards with ``openURL(_:referringApplication:)`` (a
/// scene's connection options, `scene(_:openURLContexts:)`, SwiftUI's `onOpenURL`). For the
/// latter, the opening waits for ``AppLifecycleEvent/didBecomeActive`` when the lifecycle announces
/// it (``waitsForActivation``): UIKit delivers a scene's URL before the app becomes active. A URL
/// forwarded while no opening is under way (the app is active already) is a `Deep Link Opened`
/// event, as Segment names it; the opening's own URL forwarded again is not recorded twice.
///
/// The version and build of the last launch are kept in `state/application.json` of the
/// recorder's directory (kept even while the user opted out, so opting in later does not
/// report an old install as new).
public final class ApplicationLifecycleRecorder: Sendable {
    /// The recorder the events go into.
    public let recorder: EventRecorder
    /// The app's version now.
    public let application: ApplicationVersion
    /// Which events are recorded.
    public let events: AutomaticEvents
    /// Whether `Application Opened` waits for ``AppLifecycleEvent/didBecomeActive`` (gathering the
    /// URL a scene delivers meanwhile) instead of being recorded at the launch or the return.
    public let waitsForActivation: Bool

    private let state = Locked(State())

    private struct State {
        var launched = false
        var backgrounded = false
        /// The opening not recorded yet: waiting for the launch to be announced or for activation.
        var pending: Opening?
        /// The URL the last recorded opening carried (until the app goes to the background).
        var openedURL: URL?
    }

    /// A launch or a return from the background, and the link that caused it.
    private struct Opening {
        var fromBackground: Bool
        var url: URL?
        var referringApplication: String?
    }

    /// - Parameters:
    ///   - recorder: where the events go.
    ///   - application: the app's version and build now (``ApplicationVersion/main`` in an app).
    ///   - events: which events to record (all by default).
    ///   - waitsForActivation: whether `Application Opened` waits for
    ///     ``AppLifecycleEvent/didBecomeActive`` (the lifecycle's ``AppLifecycle/announcesActivation``).
    public init(
        recorder: EventRecorder, application: ApplicationVersion, events: AutomaticEvents = .all,
        waitsForActivation: Bool = false
    ) {
        self.recorder = recorder
        self.application = application
        self.events = events
        self.waitsForActivation = waitsForActivation
    }

    /// The launch: `Application Installed` on a first launch, `Application Updated` when the
    /// version or build changed since the last one, and `Application Opened` unless the
    /// lifecycle reports the launch itself later (``AppLifecycleEvent/didFinishLaunching(url:referringApplication:)``).
    /// Once per recorder's lifetime; later calls do nothing.
    /// - Parameter announcedLater: whether the lifecycle will report the launch.
    public func launch(announcedLater: Bool) {
        guard
            state.withLock({ state in
                defer { state.launched = true }; return !state.launched
            })
        else { return }
        let layout = LogLayout(base: recorder.directory)
        let previous = Self.read(layout)
        if previous == nil, events.contains(.applicationInstalled) {
            recorder.record(
                "Application Installed",
                properties: ["version": .string(application.version), "build": .string(application.build)])
        } else if let previous, previous != application, events.contains(.applicationUpdated) {
            recorder.record(
                "Application Updated",
                properties: [
                    "version": .string(application.version), "build": .string(application.build),
                    "previous_version": .string(previous.version), "previous_build": .string(previous.build),
                ])
        }
        if previous != application { save(layout) }
        begin(Opening(fromBackground: false), announced: !announcedLater)
    }

    /// Records what a lifecycle event means: `Application Opened` at the launch and back from the
    /// background, `Application Backgrounded` on the way there.
    public func handle(_ event: AppLifecycleEvent) {
        switch event {
        case .didFinishLaunching(let url, let referringApplication):
            begin(Opening(fromBackground: false, url: url, referringApplication: referringApplication), announced: true)
        case .didEnterBackground:
            state.withLock { state in
                state.backgrounded = true
                state.openedURL = nil
            }
            if events.contains(.applicationBackgrounded) { recorder.record("Application Backgrounded") }
        case .willEnterForeground:
            // Only a return from the background is an opening (not the first foreground).
            guard
                state.withLock({ state in
                    defer { state.backgrounded = false }; return state.backgrounded
                })
            else {
                return
            }
            begin(Opening(fromBackground: true), announced: true)
        case .didBecomeActive:
            if let opening = state.withLock({ state in waitsForActivation ? take(&state) : nil }) { opened(opening) }
        case .willTerminate:
            break
        }
    }

    /// The app was opened by `url` (from `referringApplication`), as a scene learns it: its
    /// connection options at a launch, `scene(_:openURLContexts:)`, SwiftUI's `onOpenURL`. While
    /// an opening is under way (not recorded yet), `Application Opened` carries it; otherwise the
    /// app is open already and `Deep Link Opened` is recorded with `url` (and
    /// `referring_application`). The URL the opening carried, forwarded again, records nothing.
    /// - Parameters:
    ///   - url: the URL the app was asked to open.
    ///   - referringApplication: the bundle id of the app that asked, when known.
    public func openURL(_ url: URL, referringApplication: String? = nil) {
        enum Outcome { case carried, deepLink }
        let outcome: Outcome = state.withLock { state in
            if state.pending != nil, state.pending?.url == nil, events.contains(.applicationOpened) {
                state.pending?.url = url
                state.pending?.referringApplication = referringApplication
                return .carried
            }
            return state.pending?.url == url || state.openedURL == url ? .carried : .deepLink
        }
        guard outcome == .deepLink else { return }
        var properties: [String: EventValue] = ["url": .string(url.absoluteString)]
        if let referringApplication { properties["referring_application"] = .string(referringApplication) }
        recorder.record("Deep Link Opened", properties: properties)
    }

    /// Starts an opening: recorded now when it is announced and nothing waits for activation,
    /// otherwise kept (with any URL forwarded already) until it is.
    private func begin(_ opening: Opening, announced: Bool) {
        let now: Opening? = state.withLock { state in
            var opening = opening
            if let pending = state.pending, opening.url == nil, !opening.fromBackground {
                // The launch announced after a scene's URL was forwarded: keep the URL.
                opening.url = pending.url
                opening.referringApplication = pending.referringApplication
            }
            state.pending = opening
            return announced && !waitsForActivation ? take(&state) : nil
        }
        if let now { opened(now) }
    }

    /// Takes the pending opening, remembering its URL.
    private func take(_ state: inout State) -> Opening? {
        guard let opening = state.pending else { return nil }
        state.pending = nil
        state.openedURL = opening.url
        return opening
    }

    private func opened(_ opening: Opening) {
        guard events.contains(.applicationOpened) else { return }
        var properties: [String: EventValue] = [
            "from_background": .bool(opening.fromBackground), "version": .string(application.version),
            "build": .string(application.build),
        ]
        if let url = opening.url { properties["url"] = .string(url.absoluteString) }
        if let referringApplication = opening.referringApplication {
            properties["referring_application"] = .string(referringApplication)
        }
        recorder.record("Application Opened", properties: properties)
    }

    private static func read(_ layout: LogLayout) -> ApplicationVersion? {
        guard let bytes = try? AtomicFile.read(layout.applicationPath),
            case .object(let members)? = try? JSONParser.parse(bytes),
            let version = members["version"]?.stringValue, let build = members["build"]?.stringValue
        else { return nil }
        return ApplicationVersion(version: version, build: build)
    }

    private func save(_ layout: LogLayout) {
        let json = JSONValue.object(["version": .string(application.version), "build": .string(application.build)])
        do {
            try AtomicFile.createDirectory(layout.statePath)
            try AtomicFile.write(json.jsonBytes(sortedKeys: true), to: layout.applicationPath, durable: false)
        } catch {
            recorder.configuration.logger.error("cannot keep the app's version for the next launch: \(error)")
        }
    }
}
