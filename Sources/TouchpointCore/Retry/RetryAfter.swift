import Foundation

/// Reads a server's `Retry-After` header (RFC 9110 §10.2.3).
///
/// The value is either a number of seconds (`120`) or an HTTP-date
/// (`Fri, 31 Dec 1999 23:59:59 GMT`); both become a delay from `now`.
public enum RetryAfter {
    /// The delay the header value asks for.
    /// - Parameters:
    ///   - value: the header value.
    ///   - now: the current time, to turn an HTTP-date into a delay.
    /// - Returns: seconds to wait (0 for a date in the past), or nil when the value is neither
    ///   a non-negative integer nor an HTTP-date.
    public static func delay(from value: String, now: Date) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        if trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // A huge number of seconds saturates rather than failing: the caller caps it anyway.
            return TimeInterval(UInt64(trimmed) ?? UInt64.max)
        }
        guard let date = HTTPDate.parse(trimmed, now: now) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
