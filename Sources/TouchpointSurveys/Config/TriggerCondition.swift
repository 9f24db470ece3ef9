/// When a survey is shown. The one kind supported is an event: `{"event": {"name": …}}`.
public struct TriggerCondition: Sendable, Hashable {
    /// The event that shows the survey.
    public var event: EventTrigger

    /// Creates a trigger on an event.
    public init(event: EventTrigger) { self.event = event }
}
