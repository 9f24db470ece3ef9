import Foundation
import TouchpointCore

/// A request as ``TestHTTPServer`` received it, for a handler to answer and a test to inspect.
public struct TestHTTPRequest: Sendable, Hashable {
    /// The method, e.g. `POST`.
    public var method: TransportMethod
    /// The request target exactly as sent: path and query, e.g. `/v1/batch?debug=1`.
    public var target: String
    /// The HTTP version from the request line, e.g. `HTTP/1.1`.
    public var version: String
    /// The header fields as sent; lookups ignore case.
    public var headers: TransportHeaders
    /// The body, with any chunked framing removed.
    public var body: [UInt8]
    /// Which connection carried it: 1 for the server's first accepted connection, 2 for the
    /// next, and so on (two requests with the same number shared a kept-alive connection).
    public var connection: Int
    /// Its position among all requests the server received, from 0.
    public var sequence: Int

    /// Creates a request (the server does this; tests rarely need to).
    public init(
        method: TransportMethod,
        target: String,
        version: String = "HTTP/1.1",
        headers: TransportHeaders = [:],
        body: [UInt8] = [],
        connection: Int = 0,
        sequence: Int = 0
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
        self.connection = connection
        self.sequence = sequence
    }

    /// The target without its query, e.g. `/v1/batch`.
    public var path: String {
        target.firstIndex(of: "?").map { String(target[..<$0]) } ?? target
    }

    /// The query after `?`, if any, undecoded.
    public var query: String? {
        target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) }
    }

    /// The body as UTF-8 text (invalid bytes replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as JSON.
    /// - Throws: ``JSONParseError`` when it is not JSON.
    public func json() throws(JSONParseError) -> JSONValue { try JSONParser.parse(body) }
}
