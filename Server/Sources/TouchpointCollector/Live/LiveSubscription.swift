/// One live view's stream of stored events; ``cancel()`` (or dropping the stream) ends it.
public struct LiveSubscription: Sendable {
    /// The events, in the order they were published (two requests stored at once may publish
    /// in either order).
    public let events: AsyncStream<LiveEvent>
    /// How many events the stream holds for a slow reader before dropping the oldest.
    public let bufferSize: Int
    let continuation: AsyncStream<LiveEvent>.Continuation

    /// Ends the stream.
    public func cancel() { continuation.finish() }
}
