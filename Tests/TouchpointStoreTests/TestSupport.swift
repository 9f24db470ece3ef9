import Foundation
import TouchpointStore

/// Collects values from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = LockedBox<[Value]>([])

    func append(_ value: Value) { storage.mutate { $0.append(value) } }

    var values: [Value] { storage.read() }
}

/// A minimal lock for test helpers.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    // Safe: every access holds `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func mutate<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }

    func read() -> Value { mutate { $0 } }
}

/// A write scheduler that runs nothing until told to, so tests count coalesced writes exactly.
final class ManualWriteScheduler: StoreWriteScheduler {
    private let pending = LockedBox<[@Sendable () -> Void]>([])

    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) {
        pending.mutate { $0.append(work) }
    }

    /// How many scheduled writes are waiting.
    var count: Int { pending.read().count }

    /// Runs the waiting writes.
    func runAll() {
        let work = pending.mutate { pending -> [@Sendable () -> Void] in
            defer { pending.removeAll() }
            return pending
        }
        for item in work { item() }
    }
}

/// A `UserDefaults` suite of its own, removed when the test ends.
final class TemporarySuite {
    let name = "touchpoint-tests-\(UUID().uuidString)"

    deinit { UserDefaults.standard.removePersistentDomain(forName: name) }
}
