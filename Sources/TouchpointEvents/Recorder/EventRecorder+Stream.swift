#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

extension EventRecorder {
    /// A live stream of every event recorded from now on, in record order.
    ///
    /// ```swift
    /// for await event in EventRecorder.shared.eventStream() {
    ///     print(event.name)
    /// }
    /// ```
    /// - Parameter bufferingPolicy: what to keep when the reader falls behind (default: the
    ///   newest 10,000 events).
    public func eventStream(
        bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy = .bufferingNewest(10_000)
    ) -> AsyncStream<Event> {
        precondition(!isLockedByCurrentThread, "EventRecorder.eventStream() called from inside a consumer callback")
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: bufferingPolicy)
        let id = state.withLock { state in
            state.nextStreamID += 1
            state.streams[state.nextStreamID] = continuation
            return state.nextStreamID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// Every event recorded from now on, as a Combine publisher (OpenCombine on Linux).
    ///
    /// Values arrive on a private serial queue, in record order; use `receive(on:)` to move them.
    public var eventsPublisher: AnyPublisher<Event, Never> {
        precondition(!isLockedByCurrentThread, "EventRecorder.eventsPublisher read from inside a consumer callback")
        return state.withLock { state in
            if let subject = state.subject { return subject.publisher }
            let subject = EventSubject()
            state.subject = subject
            return subject.publisher
        }
    }
}

/// The subject behind `eventsPublisher`.
final class EventSubject: @unchecked Sendable {
    // Safe: `PassthroughSubject` synchronizes subscription and sending internally (in Combine and
    // OpenCombine alike), and `send` is only called from the recorder's serial publisher queue.
    private let subject = PassthroughSubject<Event, Never>()

    var publisher: AnyPublisher<Event, Never> { subject.eraseToAnyPublisher() }

    func send(_ event: Event) { subject.send(event) }
}
