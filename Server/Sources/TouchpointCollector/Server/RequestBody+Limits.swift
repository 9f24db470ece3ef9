import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Reading request bodies within the collector's limits.
enum RequestBodyReader {
    /// The whole body, decompressed when `Content-Encoding` says gzip or deflate.
    /// - Throws: ``CollectorError``: `payload_too_large` past `limit` (before or after
    ///   decompression), `unsupported_encoding` for an encoding other than gzip, deflate or identity.
    static func read(_ request: Request, limit: Int) async throws -> ByteBuffer {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw tooLarge(length, limit: limit)
        }
        let encoding = request.headers[.contentEncoding]?.lowercased().trimmingCharacters(in: .whitespaces)
        switch encoding {
        case nil, "", "identity", "gzip", "x-gzip", "deflate":
            break
        case let other?:
            throw CollectorError(
                .unsupportedEncoding, "Content-Encoding \(other) is not supported; send gzip, deflate or identity")
        }
        // One buffer written in place: no second reference, so no copy of what came before
        // each chunk (a 500 KB body arrives in dozens of chunks).
        var body = ByteBuffer()
        if let length = request.headers[.contentLength].flatMap(Int.init), length > 0 {
            body.reserveCapacity(length)
        }
        for try await var chunk in request.body {
            guard body.readableBytes + chunk.readableBytes <= limit else {
                throw tooLarge(body.readableBytes + chunk.readableBytes, limit: limit)
            }
            body.writeBuffer(&chunk)
        }
        guard let encoding, ["gzip", "x-gzip", "deflate"].contains(encoding) else { return body }
        let inflated = try body.withUnsafeReadableBytes { raw in
            Result { () throws(CollectorError) in try BodyInflater.inflate(raw, limit: limit) }
        }.get()
        return ByteBuffer(bytes: inflated)
    }

    private static func tooLarge(_ size: Int, limit: Int) -> CollectorError {
        CollectorError(.payloadTooLarge, "body: at least \(size) bytes, over the limit of \(limit) bytes per request")
    }
}
