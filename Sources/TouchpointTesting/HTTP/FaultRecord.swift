import TouchpointCore

/// One request a ``FaultInjectingServer`` received and what it did with it.
public struct FaultRecord: Sendable, Hashable {
    /// The arrival index, from 0.
    public var sequence: Int
    /// The request method.
    public var method: TransportMethod
    /// The request target (path and query).
    public var target: String
    /// The body size in bytes.
    public var bodySize: Int
    /// The injected fault, or nil when forwarded normally.
    public var fault: FaultPlan.Fault?
    /// The upstream's status when the request was forwarded and answered.
    public var upstreamStatus: Int?

    /// Creates a record.
    public init(
        sequence: Int,
        method: TransportMethod,
        target: String,
        bodySize: Int,
        fault: FaultPlan.Fault?,
        upstreamStatus: Int? = nil
    ) {
        self.sequence = sequence
        self.method = method
        self.target = target
        self.bodySize = bodySize
        self.fault = fault
        self.upstreamStatus = upstreamStatus
    }
}
