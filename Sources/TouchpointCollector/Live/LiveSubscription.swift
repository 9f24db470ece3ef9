/// One live view's stream of stored events; ``cancel()`` (or dropping the stream) ends it.
public struct LiveSubscription: Sendable {
    /// The events, in the order they were stored.
    public let events: AsyncStream<LiveEvent>
    let continuation: AsyncStream<LiveEvent>.Continuation

    /// Ends the stream.
    public func cancel() { continuation.finish() }
}
