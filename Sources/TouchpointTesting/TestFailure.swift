/// An error a test throws to stop with a message that says what went wrong and where.
///
/// For a helper that cannot go on (a fixture that did not start, a response of the wrong shape),
/// where `#require` has no condition to check:
///
/// ```swift
/// guard response.status == 200 else {
///     throw TestFailure("GET /v1/query/counts: HTTP \(response.status) \(response.text)")
/// }
/// ```
public struct TestFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The message.
    public let description: String

    /// Creates a failure.
    /// - Parameter description: what went wrong, naming what and where.
    public init(_ description: String) { self.description = description }
}
