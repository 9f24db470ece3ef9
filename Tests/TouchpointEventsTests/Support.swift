import Foundation
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

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
