import TouchpointCore

/// Hands every event this collector stores to the live views watching its source.
///
/// Ingest publishes after the database committed, so a live view never shows an event that is
/// not stored. Events stored by another collector on the same PostgreSQL database do not appear
/// here (the feed is in memory, per process). Without subscribers publishing costs one lock.
///
/// ```swift
/// let subscription = services.live.subscribe(source: "default")
/// for await live in subscription.events { print(live.event.name ?? live.event.type) }
/// ```
public final class LiveEventFeed: Sendable {
    /// The most subscribers at once; more are refused (each holds an open connection).
    public let maximumSubscribers: Int
    /// Events a slow subscriber may fall behind before the oldest are dropped (the default, 200,
    /// is what the live page keeps on screen).
    public let bufferSize: Int

    private struct State {
        var subscribers: [Int: (source: String, continuation: AsyncStream<LiveEvent>.Continuation)] = [:]
        var nextID = 0
        var closed = false
    }

    private let state = Locked(State())

    /// Creates a feed.
    public init(maximumSubscribers: Int = 64, bufferSize: Int = 200) {
        self.maximumSubscribers = maximumSubscribers
        self.bufferSize = bufferSize
    }

    /// Starts watching `source`.
    /// - Returns: the subscription, or nil when ``maximumSubscribers`` are already watching or
    ///   the feed was closed.
    public func subscribe(source: String) -> LiveSubscription? {
        let (stream, continuation) = AsyncStream.makeStream(
            of: LiveEvent.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let id: Int? = state.withLock { state in
            guard !state.closed, state.subscribers.count < maximumSubscribers else { return nil }
            state.nextID += 1
            state.subscribers[state.nextID] = (source, continuation)
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return nil
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return LiveSubscription(events: stream, bufferSize: bufferSize, continuation: continuation)
    }

    /// How many live views are watching.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Ends every subscription and refuses new ones.
    public func close() {
        let continuations = state.withLock { state in
            state.closed = true
            return state.subscribers.values.map(\.continuation)
        }
        for continuation in continuations { continuation.finish() }
    }

    /// Publishes the messages of one request that were stored now (`stored[i]` true).
    func publish(_ messages: [IngestMessage], stored: [Bool], source: String) {
        let watchers = state.withLock { state in
            state.subscribers.values.filter { $0.source == source }.map(\.continuation)
        }
        guard !watchers.isEmpty else { return }
        for (message, isNew) in zip(messages, stored) where isNew {
            let event = LiveEvent(message, source: source)
            for watcher in watchers { watcher.yield(event) }
        }
    }
}
