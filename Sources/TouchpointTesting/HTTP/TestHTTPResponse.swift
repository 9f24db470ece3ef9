import TouchpointCore

/// What ``TestHTTPServer`` sends back: status, headers and body, or a misbehaviour.
///
/// ```swift
/// server.enqueue(.json(["surveys": []], headers: ["ETag": "\"v1\""]))
/// server.enqueue(TestHTTPResponse(status: 304))
/// server.enqueue(.fault(.reset))
/// ```
public struct TestHTTPResponse: Sendable, Hashable {
    /// How the server misbehaves instead of answering normally.
    public enum Fault: Sendable, Hashable {
        /// Reset the connection (TCP RST, via `SO_LINGER` 0) without sending anything.
        case reset
        /// Send the status line, the headers (with the full `Content-Length`) and half of the
        /// body, then close: the client sees a truncated response.
        case closeMidResponse
        /// Send nothing for this many seconds (or until the client gives up or the server
        /// stops), then close.
        case stall(seconds: Double)
    }

    /// The status code.
    public var status: Int
    /// Header fields. `Content-Length` (or `Transfer-Encoding`) and `Connection` are added by
    /// the server when absent.
    public var headers: TransportHeaders
    /// The body.
    public var body: [UInt8]
    /// Whether to send the body with `Transfer-Encoding: chunked` instead of `Content-Length`.
    public var isChunked: Bool
    /// Whether to close the connection after this response (keep-alive otherwise).
    public var closesConnection: Bool
    /// A misbehaviour replacing (or truncating) the normal answer.
    public var fault: Fault?

    /// Creates a response.
    public init(
        status: Int = 200,
        headers: TransportHeaders = [:],
        body: [UInt8] = [],
        isChunked: Bool = false,
        closesConnection: Bool = false,
        fault: Fault? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.isChunked = isChunked
        self.closesConnection = closesConnection
        self.fault = fault
    }

    /// A response with a UTF-8 text body (`text/plain` unless `headers` say otherwise).
    public static func text(_ text: String, status: Int = 200, headers: TransportHeaders = [:]) -> TestHTTPResponse {
        var headers = headers
        if !headers.contains("Content-Type") { headers["Content-Type"] = "text/plain; charset=utf-8" }
        return TestHTTPResponse(status: status, headers: headers, body: Array(text.utf8))
    }

    /// A response with a JSON body (`application/json`).
    public static func json(_ value: JSONValue, status: Int = 200, headers: TransportHeaders = [:]) -> TestHTTPResponse
    {
        var headers = headers
        if !headers.contains("Content-Type") { headers["Content-Type"] = "application/json" }
        return TestHTTPResponse(status: status, headers: headers, body: value.jsonBytes(sortedKeys: true))
    }

    /// A misbehaving response.
    public static func fault(_ fault: Fault) -> TestHTTPResponse { TestHTTPResponse(status: 0, fault: fault) }

    /// The standard reason phrase for `status` (`OK`, `Not Modified`, …), or `Status` when unknown.
    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 408: return "Request Timeout"
        case 413: return "Content Too Large"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return "Status"
        }
    }

    /// The bytes to send for this response (ignoring ``fault``).
    /// - Parameters:
    ///   - includeBody: false for a `HEAD` request or a status that has no body.
    ///   - close: whether to announce `Connection: close`.
    func serialized(includeBody: Bool, close: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        var headers = headers
        let bodyAllowed = status >= 200 && status != 204 && status != 304
        if bodyAllowed && !headers.contains("Content-Length") && !headers.contains("Transfer-Encoding") {
            if isChunked {
                headers["Transfer-Encoding"] = "chunked"
            } else {
                headers["Content-Length"] = "\(body.count)"
            }
        }
        if close {
            headers["Connection"] = "close"
        } else if !headers.contains("Connection") {
            headers["Connection"] = "keep-alive"
        }
        for field in headers { head += "\(field.name): \(field.value)\r\n" }
        head += "\r\n"
        var bytes = Array(head.utf8)
        guard includeBody && bodyAllowed else { return bytes }
        if isChunked {
            var offset = 0
            while offset < body.count {
                let size = min(16 * 1024, body.count - offset)
                bytes += Array((String(size, radix: 16) + "\r\n").utf8)
                bytes += body[offset..<(offset + size)]
                bytes += [13, 10]
                offset += size
            }
            bytes += Array("0\r\n\r\n".utf8)
        } else {
            bytes += body
        }
        return bytes
    }
}
