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
/// ```
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

    private let state = Locked(State())

    private struct State {
        var launched = false
        var backgrounded = false
    }

    /// - Parameters:
    ///   - recorder: where the events go.
    ///   - application: the app's version and build now (``ApplicationVersion/main`` in an app).
    ///   - events: which events to record (all by default).
    public init(recorder: EventRecorder, application: ApplicationVersion, events: AutomaticEvents = .all) {
        self.recorder = recorder
        self.application = application
        self.events = events
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
        if !announcedLater { opened(fromBackground: false, url: nil, referringApplication: nil) }
    }

    /// Records what a lifecycle event means: `Application Opened` at the launch and back from the
    /// background, `Application Backgrounded` on the way there.
    public func handle(_ event: AppLifecycleEvent) {
        switch event {
        case .didFinishLaunching(let url, let referringApplication):
            opened(fromBackground: false, url: url, referringApplication: referringApplication)
        case .didEnterBackground:
            state.withLock { $0.backgrounded = true }
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
            opened(fromBackground: true, url: nil, referringApplication: nil)
        case .willTerminate:
            break
        }
    }

    private func opened(fromBackground: Bool, url: URL?, referringApplication: String?) {
        guard events.contains(.applicationOpened) else { return }
        var properties: [String: EventValue] = [
            "from_background": .bool(fromBackground), "version": .string(application.version),
            "build": .string(application.build),
        ]
        if let url { properties["url"] = .string(url.absoluteString) }
        if let referringApplication { properties["referring_application"] = .string(referringApplication) }
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
