// An interface stub of the Network declarations Touchpoint uses, for type-checking its Apple-only
// code on Linux (scripts/check-apple.sh); test-only, never run. NWPathMonitor exists on every
// platform the package declares (iOS 12, macOS 10.14, tvOS 12, watchOS 6, visionOS 1 and later).
@_exported import Dispatch

public final class NWPathMonitor: @unchecked Sendable {
    public init() {}
    public var pathUpdateHandler: (@Sendable (_ newPath: NWPath) -> Void)?
    public func start(queue: DispatchQueue) {}
    public func cancel() {}
}

public struct NWPath: Sendable {
    public enum Status: Sendable, Equatable {
        case satisfied
        case unsatisfied
        case requiresConnection
    }

    public var status: Status { fatalError() }
}
