import Logging
import TouchpointCore

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

extension ScopedStore {
    /// The value at a key path (or pattern) now, then each time it changes.
    ///
    /// Each subscriber to the returned publisher is one subscription of the store, registered
    /// when it subscribes and removed when it cancels. It is told only about changes that can
    /// affect its path (an ancestor, the path itself, a descendant, a wildcard match) and only
    /// when its value actually differs. Values arrive on the thread that made the change.
    /// An invalid key path logs an error and publishes nil once.
    public func publisher(for keyPath: String) -> AnyPublisher<StoreValue?, Never> {
        subjectPublisher([keyPath], combined: false, kind: "publisher") { $0 }
    }

    /// An object of the values at several key paths now, then each time any of them changes.
    ///
    /// The object's keys are the key paths as given; an absent value is `.null`. Invalid key
    /// paths are logged and left out.
    public func publisher(for keyPaths: Set<String>) -> AnyPublisher<StoreValue, Never> {
        subjectPublisher(keyPaths.sorted(), combined: true, kind: "publisher(set)") { $0 ?? .object([:]) }
    }

    /// The value at a key path now, then each time it changes, as an `AsyncStream`.
    /// - Parameters:
    ///   - keyPath: a key path or pattern.
    ///   - bufferingPolicy: what to keep when the reader falls behind (default: the newest 1,024).
    public func values(
        for keyPath: String,
        bufferingPolicy: AsyncStream<StoreValue?>.Continuation.BufferingPolicy = .bufferingNewest(1_024)
    ) -> AsyncStream<StoreValue?> {
        stream([keyPath], combined: false, kind: "values", bufferingPolicy: bufferingPolicy) { $0 }
    }

    /// An object of the values at several key paths now, then each time any of them changes, as an `AsyncStream`.
    public func values(
        for keyPaths: Set<String>,
        bufferingPolicy: AsyncStream<StoreValue>.Continuation.BufferingPolicy = .bufferingNewest(1_024)
    ) -> AsyncStream<StoreValue> {
        stream(keyPaths.sorted(), combined: true, kind: "values(set)", bufferingPolicy: bufferingPolicy) {
            $0 ?? .object([:])
        }
    }

    /// Every change from now on (each write or transaction, with the expressions it triggered).
    public var changesPublisher: AnyPublisher<StoreChange, Never> {
        Deferred { [weak self] () -> AnyPublisher<StoreChange, Never> in
            guard let self else { return Empty().eraseToAnyPublisher() }
            let subject = ChangeSubject()
            let id = self.guarded.read { $0.observeChanges { subject.send($0) } }
            return subject.subject
                .handleEvents(receiveCancel: { [weak self] in
                    if let id { _ = self?.guarded.read { $0.stopObservingChanges(id) } }
                })
                .eraseToAnyPublisher()
        }
        .eraseToAnyPublisher()
    }

    /// Every change from now on, as an `AsyncStream`.
    public func changes(
        bufferingPolicy: AsyncStream<StoreChange>.Continuation.BufferingPolicy = .bufferingNewest(1_024)
    ) -> AsyncStream<StoreChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: StoreChange.self, bufferingPolicy: bufferingPolicy)
        let id = guarded.read { $0.observeChanges { continuation.yield($0) } }
        continuation.onTermination = { [weak self] _ in
            if let id { _ = self?.guarded.read { $0.stopObservingChanges(id) } }
        }
        return stream
    }

    /// How many subscriptions (publisher subscribers, streams, bindings) are active.
    public var subscriptionCount: Int { guarded.read { $0.subscriptions.count } ?? 0 }

    /// Steps inside the store that failed although they never should (a rollback that could not
    /// write a value back, a reset that could not replace the values): 0 unless the store has a
    /// bug. A debug build stops at the first; a release build counts them here.
    public var internalFailureCount: Int { guarded.read { $0.internalFailures } ?? 0 }

    // MARK: Registration

    /// Registers a subscription; `makeDeliver` gets the current value and returns what to call
    /// with later ones, atomically with the registration. Returns the id, or nil when no key path
    /// parses (or when called from inside a live expression's compute).
    func subscribe(
        _ keyPaths: [String], combined: Bool, kind: String,
        makeDeliver: (StoreValue?) -> @Sendable (StoreValue?) -> Void
    ) -> Int? {
        let registered = guarded.read { state -> Int? in
            var entries: [KeyPathCache.Entry] = []
            var accepted: [String] = []
            for keyPath in keyPaths {
                do {
                    entries.append(try state.paths.entry(keyPath))
                    accepted.append(keyPath)
                } catch {
                    context.logger.error("\(scope): cannot observe: \(error)")
                }
            }
            guard !entries.isEmpty else { return nil }
            return state.subscribe(
                entries, keyPaths: accepted, combined: combined, kind: kind, makeDeliver: makeDeliver)
        }
        if registered == nil, guarded.reentrancy.isHeldByCurrentThread {
            context.logger.error("\(scope): cannot subscribe from inside a live expression's compute")
        }
        return registered ?? nil
    }

    /// Removes a subscription.
    func unsubscribe(_ id: Int) {
        _ = guarded.read { $0.unsubscribe(id) }
    }

    private func subjectPublisher<Output: Sendable>(
        _ keyPaths: [String], combined: Bool, kind: String, _ convert: @escaping @Sendable (StoreValue?) -> Output
    ) -> AnyPublisher<Output, Never> {
        StoreValuePublisher(store: self, keyPaths: keyPaths, combined: combined, kind: kind, convert: convert)
            .eraseToAnyPublisher()
    }

    private func stream<Output: Sendable>(
        _ keyPaths: [String], combined: Bool, kind: String,
        bufferingPolicy: AsyncStream<Output>.Continuation.BufferingPolicy,
        _ convert: @escaping @Sendable (StoreValue?) -> Output
    ) -> AsyncStream<Output> {
        let (stream, continuation) = AsyncStream.makeStream(of: Output.self, bufferingPolicy: bufferingPolicy)
        let id = subscribe(keyPaths, combined: combined, kind: kind) { current in
            continuation.yield(convert(current))
            return { continuation.yield(convert($0)) }
        }
        guard let id else {
            continuation.yield(convert(nil))
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return stream
    }
}

/// The subject behind ``ScopedStore/changesPublisher``.
final class ChangeSubject: @unchecked Sendable {
    // Safe: `PassthroughSubject` synchronizes subscription and sending internally.
    let subject = PassthroughSubject<StoreChange, Never>()

    func send(_ change: StoreChange) { subject.send(change) }
}
