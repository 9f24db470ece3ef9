import HTTPTypes
import Hummingbird
import NIOCore
import TouchpointCore

extension Response {
    /// A response whose body is `value` as compact JSON.
    static func json(_ value: JSONValue, status: HTTPTypes.HTTPResponse.Status = .ok, headers: HTTPFields = [:])
        -> Response
    {
        var writer = JSONWriter(capacity: 512)
        writer.value(value)
        return json(bytes: writer.bytes, status: status, headers: headers)
    }

    /// A response whose body is `bytes`, already JSON.
    static func json(bytes: [UInt8], status: HTTPTypes.HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response
    {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

extension CollectorError {
    /// The error as a response: its JSON, its status, and `Retry-After` when it has one.
    var response: Response {
        var headers: HTTPFields = [:]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response.json(json, status: status, headers: headers)
    }
}

extension CollectorError: HTTPResponseError {
    /// The error as a JSON response.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        response
    }
}
