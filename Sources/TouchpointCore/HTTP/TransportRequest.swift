import Foundation

/// An HTTP request for an ``HTTPTransport``: method, URL, headers, body bytes and a timeout.
///
/// ```swift
/// var request = TransportRequest(method: .post, url: collector.appendingPathComponent("v1/batch"))
/// request.headers["Content-Type"] = "application/json"
/// request.body = payload
/// request.timeout = 15
/// ```
public struct TransportRequest: Sendable, Hashable {
    /// The request method.
    public var method: TransportMethod
    /// The absolute `http` or `https` URL.
    public var url: URL
    /// The header fields to send. The transport adds `Content-Length` itself.
    public var headers: TransportHeaders
    /// The body bytes; empty for none.
    public var body: [UInt8]
    /// The most time, in seconds, the whole exchange may take, from sending the request to the
    /// last byte of the response. A transport fails with ``TransportError/Code/timeout`` past it.
    public var timeout: TimeInterval

    /// Creates a request.
    /// - Parameters:
    ///   - method: the method; `GET` by default.
    ///   - url: the absolute `http` or `https` URL.
    ///   - headers: header fields.
    ///   - body: body bytes.
    ///   - timeout: seconds the whole exchange may take (30 by default).
    public init(
        method: TransportMethod = .get,
        url: URL,
        headers: TransportHeaders = [:],
        body: [UInt8] = [],
        timeout: TimeInterval = 30
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}
