/// Whether a write was accepted.
public enum ValidationResult: Sendable, Hashable, CustomStringConvertible {
    /// Accepted (possibly after a lenient fix).
    case ok
    /// Rejected; the store is unchanged. The reason names the key path and the rule.
    case failed(reason: String)

    /// Whether this is ``ok``.
    public var isOK: Bool { self == .ok }

    /// `ok`, or the reason.
    public var description: String {
        switch self {
        case .ok: return "ok"
        case .failed(let reason): return reason
        }
    }
}
