import Foundation

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
