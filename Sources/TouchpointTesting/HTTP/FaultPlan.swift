import TouchpointCore

/// Which requests a ``FaultInjectingServer`` answers badly, and how: a scripted sequence
/// first, then seeded random draws at configured rates.
///
/// The same seed gives the same decisions for the same order of requests, so a failing test
/// can be replayed. With requests arriving concurrently the order can vary; the decisions by
/// arrival index stay fixed (see ``FaultInjectingServer/records``).
///
/// ```swift
/// var plan = FaultPlan(
///     seed: 42,
///     sequence: [.serviceUnavailable(retryAfter: "1"), nil, .reset],   // requests 0, 1, 2
///     rates: [.internalServerError: 0.1, .reset: 0.05, .stall(seconds: 3): 0.02],
///     maximumConsecutiveFaults: 5,
///     payloadLimit: 500_000                                             // 413 above it
/// )
/// ```
public struct FaultPlan: Sendable, Hashable {
    /// One way of answering badly.
    public enum Fault: Sendable, Hashable, CustomStringConvertible {
        /// Answer with this status (and `Retry-After` value, if given) without forwarding.
        case status(Int, retryAfter: String?)
        /// Reset the connection (TCP RST) without forwarding.
        case reset
        /// Forward the request, then send only half of the upstream's response and close: the
        /// upstream did the work but the client never learns it ("lost acknowledgement").
        case closeMidResponse
        /// Hold the request this many seconds without forwarding (past the client's timeout), then close.
        case stall(seconds: Double)
        /// Reset this connection and stop listening for this many seconds (connections are
        /// refused), then listen again on the same port.
        case down(seconds: Double)

        /// `500 Internal Server Error`.
        public static let internalServerError = Fault.status(500, retryAfter: nil)
        /// `413 Content Too Large`.
        public static let payloadTooLarge = Fault.status(413, retryAfter: nil)

        /// `503 Service Unavailable`, optionally with `Retry-After`.
        public static func serviceUnavailable(retryAfter: String? = nil) -> Fault {
            .status(503, retryAfter: retryAfter)
        }

        /// `429 Too Many Requests` with `Retry-After` (seconds or an HTTP-date).
        public static func tooManyRequests(retryAfter: String) -> Fault { .status(429, retryAfter: retryAfter) }

        /// Whether the request still reaches the upstream under this fault.
        public var isForwarded: Bool { self == .closeMidResponse }

        public var description: String {
            switch self {
            case .status(let status, let retryAfter?): return "status \(status) (Retry-After: \(retryAfter))"
            case .status(let status, nil): return "status \(status)"
            case .reset: return "reset"
            case .closeMidResponse: return "close mid-response"
            case .stall(let seconds): return "stall \(seconds) s"
            case .down(let seconds): return "down \(seconds) s"
            }
        }
    }

    /// A fault and the probability of drawing it for a request past the scripted sequence.
    public struct Rate: Sendable, Hashable {
        /// The fault.
        public var fault: Fault
        /// Its probability, from 0 to 1.
        public var probability: Double

        /// Creates a rate.
        public init(fault: Fault, probability: Double) {
            self.fault = fault
            self.probability = probability
        }
    }

    /// The seed of the random draws.
    public let seed: UInt64
    /// Decisions for the first requests, in arrival order (`nil`: forward normally).
    public let sequence: [Fault?]
    /// Faults drawn at random after the sequence; their probabilities add up to at most 1.
    public let rates: [Rate]
    /// After this many faults in a row the next request is forwarded, so progress is certain.
    public let maximumConsecutiveFaults: Int?
    /// Request bodies larger than this always get `413` (like a server with a size limit),
    /// without consuming a draw.
    public let payloadLimit: Int?

    private var random: SeededRandomNumberGenerator
    private var position = 0
    private var consecutiveFaults = 0

    /// Creates a plan.
    /// - Parameters:
    ///   - seed: fixes the random draws.
    ///   - sequence: decisions for the first requests (`nil` forwards).
    ///   - rates: faults drawn at random afterwards, in order; probabilities add up to ≤ 1.
    ///   - maximumConsecutiveFaults: forward after this many faults in a row.
    ///   - payloadLimit: answer `413` to bodies above this many bytes.
    public init(
        seed: UInt64 = 0,
        sequence: [Fault?] = [],
        rates: KeyValuePairs<Fault, Double> = [:],
        maximumConsecutiveFaults: Int? = nil,
        payloadLimit: Int? = nil
    ) {
        self.seed = seed
        self.sequence = sequence
        self.rates = rates.map { Rate(fault: $0.key, probability: max(0, $0.value)) }
        self.maximumConsecutiveFaults = maximumConsecutiveFaults
        self.payloadLimit = payloadLimit
        random = SeededRandomNumberGenerator(seed: seed)
    }

    /// A plan that forwards everything.
    public static let none = FaultPlan()

    /// How many decisions have been made.
    public var decisions: Int { position }

    /// The decision for the next request.
    /// - Parameter bodySize: the request body's size, for ``payloadLimit``.
    /// - Returns: the fault to inject, or nil to forward normally.
    public mutating func nextFault(bodySize: Int = 0) -> Fault? {
        defer { position += 1 }
        if let payloadLimit, bodySize > payloadLimit { return .payloadTooLarge }
        var fault: Fault?
        if position < sequence.count {
            fault = sequence[position]
        } else {
            // One draw per request whatever the outcome, so later decisions do not shift.
            let draw = Double.random(in: 0..<1, using: &random)
            var cumulative = 0.0
            for rate in rates {
                cumulative += rate.probability
                if draw < cumulative {
                    fault = rate.fault
                    break
                }
            }
        }
        if fault != nil, let maximumConsecutiveFaults, consecutiveFaults >= maximumConsecutiveFaults { fault = nil }
        consecutiveFaults = fault == nil ? 0 : consecutiveFaults + 1
        return fault
    }
}
