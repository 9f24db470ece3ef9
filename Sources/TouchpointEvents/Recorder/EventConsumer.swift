/// Something that receives every event as it is recorded: routing, delivery, surveys, promotion.
///
/// Consumers are called synchronously, in record order, while the recorder holds its lock, so
/// they see exactly the order of the log. A consumer must therefore return quickly (enqueue the
/// event and do the work elsewhere) and must not wait for anything. An event a consumer records
/// from inside its callback is recorded right after the current one's consumers have returned.
public protocol EventConsumer: AnyObject, Sendable {
    /// Called for every recorded event, in order.
    /// - Parameters:
    ///   - event: the event as written to the log.
    ///   - attachment: what the caller passed along with the event (a typed event object, say),
    ///     or nil.
    func eventRecorder(_ recorder: EventRecorder, didRecord event: Event, attachment: (any Sendable)?)

    /// Called when a session starts (explicitly, by timeout, or on the first event).
    func eventRecorder(_ recorder: EventRecorder, didStart session: EventSession)

    /// Called when a session ends.
    func eventRecorder(_ recorder: EventRecorder, didEnd session: EventSession)

    /// Called after ``EventRecorder/clear()`` deleted all stored data.
    func eventRecorderDidClear(_ recorder: EventRecorder)

    /// Called after the user opted out of recording or back in (outside the recorder's lock):
    /// while opted out nothing is recorded, and nothing should be sent.
    func eventRecorder(_ recorder: EventRecorder, didChangeConsent isOptedOut: Bool)

    /// Called when ``EventRecorder/resetIdentity()`` starts a new anonymous user, in record order
    /// (while the recorder holds its lock, like ``eventRecorder(_:didRecord:attachment:)``: after
    /// the previous user's last event, before the next user's first): what a consumer keeps about
    /// the previous anonymous user (or the signed-out one) no longer applies to the events that
    /// follow.
    func eventRecorder(_ recorder: EventRecorder, didResetIdentity anonymousId: String)

    /// Whether retention may delete this session's files now. Return false while the consumer
    /// still needs them (events not yet delivered, say). Called off the record path.
    func eventRecorder(_ recorder: EventRecorder, mayDelete session: SessionJournal.Entry) -> Bool
}

extension EventConsumer {
    public func eventRecorder(_ recorder: EventRecorder, didStart session: EventSession) {}
    public func eventRecorder(_ recorder: EventRecorder, didEnd session: EventSession) {}
    public func eventRecorderDidClear(_ recorder: EventRecorder) {}
    public func eventRecorder(_ recorder: EventRecorder, didChangeConsent isOptedOut: Bool) {}
    public func eventRecorder(_ recorder: EventRecorder, didResetIdentity anonymousId: String) {}
    public func eventRecorder(_ recorder: EventRecorder, mayDelete session: SessionJournal.Entry) -> Bool { true }
}
