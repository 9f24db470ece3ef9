import Foundation

/// An HTTP response as an ``HTTPTransport`` received it: status, headers and the whole body.
public struct TransportResponse: Sendable, Hashable {
    /// The status code, e.g. `200`, `304`, `503`.
    public var status: Int
    /// The header fields; lookups ignore case.
    public var headers: TransportHeaders
    /// The body bytes (already decompressed when the server used a content coding).
    public var body: [UInt8]
    /// The URL that answered: the request's, or where a same-host redirect led.
    public var url: URL

    /// Creates a response.
    public init(status: Int, headers: TransportHeaders = [:], body: [UInt8] = [], url: URL) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The start of the body as text on one line, for logs and error messages: at most `limit`
    /// bytes, line breaks as spaces, `…` when cut; empty for an empty body.
    public func bodyExcerpt(limit: Int = 200) -> String {
        Self.excerpt(of: body, limit: limit)
    }

    /// The start of `body` as text on one line (see ``bodyExcerpt(limit:)``).
    public static func excerpt(of body: [UInt8], limit: Int = 200) -> String {
        guard !body.isEmpty else { return "" }
        let text = String(decoding: body.prefix(limit), as: UTF8.self)
            .replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        return text + (body.count > limit ? "…" : "")
    }

    /// How long the server asked the client to wait, from its `Retry-After` header, in seconds.
    /// - Parameter now: the current time, to turn an HTTP-date into a delay.
    /// - Returns: nil when the header is absent or unreadable.
    public func retryAfter(now: Date) -> TimeInterval? {
        headers["Retry-After"].flatMap { RetryAfter.delay(from: $0, now: now) }
    }
}
