import TouchpointEvents

/// The dispatcher's ear on the recorder: new events and sessions wake it, a cleared log resets
/// its cursor, and sessions it has not delivered are kept from retention.
///
/// Called under the recorder's lock, so it only flips a flag and wakes the loop; it never reads
/// or sends anything itself. It holds the dispatcher weakly: the recorder keeps its consumers.
final class DeliveryConsumer: EventConsumer {
    weak let dispatcher: EventDispatcher?

    init(dispatcher: EventDispatcher) { self.dispatcher = dispatcher }

    func eventRecorder(_ recorder: EventRecorder, didRecord event: Event, attachment: (any Sendable)?) {
        dispatcher?.noteNewData()
    }

    func eventRecorder(_ recorder: EventRecorder, didStart session: EventSession) {
        dispatcher?.noteNewData()
    }

    func eventRecorderDidClear(_ recorder: EventRecorder) {
        dispatcher?.noteCleared()
    }

    func eventRecorder(_ recorder: EventRecorder, didChangeConsent isOptedOut: Bool) {
        dispatcher?.noteConsent(isOptedOut: isOptedOut)
    }

    func eventRecorder(_ recorder: EventRecorder, mayDelete session: SessionJournal.Entry) -> Bool {
        guard let dispatcher else { return true }
        return dispatcher.hasDelivered(session)
    }
}
