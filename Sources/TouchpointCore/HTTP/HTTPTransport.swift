/// Something that sends an ``TransportRequest`` and returns the whole ``TransportResponse``.
///
/// Every HTTP exchange in the SDK goes through this protocol, so the delivery queue and
/// ``RemoteResource`` work the same over ``URLSessionTransport`` in an app and over any other
/// implementation a host provides. Implementations must be safe to call from many tasks at once.
///
/// Any status code is a response, not an error: a `503` is returned, not thrown.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and waits for the complete response.
    /// - Parameter request: the request; its ``TransportRequest/timeout`` bounds the whole exchange.
    /// - Returns: the response, whatever its status.
    /// - Throws: ``TransportError`` when no complete response arrived (timeout, refused or reset
    ///   connection, cancellation, a malformed response).
    func send(_ request: TransportRequest) async throws -> TransportResponse
}
