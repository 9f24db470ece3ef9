#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

/// The subject behind one subscription of ``ScopedStore/publisher(for:)-(String)``.
final class ValueSubject<Output: Sendable>: @unchecked Sendable {
    // Safe: `CurrentValueSubject` synchronizes subscription and sending internally (in Combine
    // and OpenCombine alike), and the store sends from one draining thread at a time.
    let subject: CurrentValueSubject<Output, Never>

    init(_ initial: Output) { subject = CurrentValueSubject(initial) }

    func send(_ value: Output) { subject.send(value) }
}
