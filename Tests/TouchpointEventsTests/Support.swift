import Foundation
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

/// A recorder over a fresh temporary directory with a manual clock.
struct RecorderFixture {
    let directory: TemporaryDirectory
    let clock: ManualClock
    let recorder: EventRecorder

    init(configure: (inout EventRecorderConfiguration) -> Void = { _ in }) throws {
        directory = try TemporaryDirectory(prefix: "events-test")
        clock = ManualClock()
        var configuration = EventRecorderConfiguration()
        configuration.clock = clock
        configure(&configuration)
        recorder = EventRecorder(directory: directory.url, configuration: configuration)
    }

    /// Another recorder over the same directory, as after a relaunch.
    func relaunch(configure: (inout EventRecorderConfiguration) -> Void = { _ in }) -> EventRecorder {
        var configuration = EventRecorderConfiguration()
        configuration.clock = clock
        configure(&configuration)
        return EventRecorder(directory: directory.url, configuration: configuration)
    }

    func eventsFile(_ session: EventSession) -> String {
        directory.path + "/"
            + LogLayout(base: directory.url).relativeSessionDirectory(
                userId: session.userId, sessionId: session.id) + "/events.jsonl"
    }

    func lines(of session: EventSession) throws -> [String] {
        let text = try String(contentsOfFile: eventsFile(session), encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }
}

/// Collects what a consumer receives, in order.
final class RecordingConsumer: EventConsumer {
    let received = Locked<[String]>([])
    let attachments = Locked<[String]>([])
    let onEvent: (@Sendable (EventRecorder, Event) -> Void)?

    init(onEvent: (@Sendable (EventRecorder, Event) -> Void)? = nil) { self.onEvent = onEvent }

    func eventRecorder(_ recorder: EventRecorder, didRecord event: Event, attachment: (any Sendable)?) {
        received.withLock { $0.append(event.name) }
        if let text = attachment as? String { attachments.withLock { $0.append(text) } }
        onEvent?(recorder, event)
    }

    func eventRecorder(_ recorder: EventRecorder, didStart session: EventSession) {
        received.withLock { $0.append("start:\(session.userId ?? "anon")") }
    }

    func eventRecorder(_ recorder: EventRecorder, didEnd session: EventSession) {
        received.withLock { $0.append("end:\(session.userId ?? "anon")") }
    }
}
