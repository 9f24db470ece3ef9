import CTouchpointZlib

/// Decompresses gzip (and zlib `deflate`) request bodies with the system zlib, never past a limit.
public enum BodyInflater {
    /// Inflates `input`.
    /// - Parameters:
    ///   - input: the compressed bytes (a gzip or zlib stream; the header tells which).
    ///   - limit: the most bytes the output may have.
    /// - Returns: the decompressed bytes.
    /// - Throws: ``CollectorError`` `payload_too_large` when the output would exceed `limit`;
    ///   `invalid_request` when the stream is corrupt, truncated or followed by other data.
    public static func inflate(_ input: UnsafeRawBufferPointer, limit: Int) throws(CollectorError) -> [UInt8] {
        var stream = z_stream()
        // 15 window bits + 32: detect a gzip or zlib header automatically.
        let status = inflateInit2_(&stream, 15 + 32, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            throw CollectorError(.invalidRequest, "body: cannot start zlib (\(status))")
        }
        defer { inflateEnd(&stream) }
        guard let base = input.baseAddress, !input.isEmpty else {
            throw CollectorError(.invalidRequest, "body: empty gzip stream")
        }
        var output = [UInt8](repeating: 0, count: min(max(input.count * 4, 4096), limit + 1))
        var produced = 0
        stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        while true {
            if produced == output.count {
                guard output.count <= limit else {
                    throw CollectorError(
                        .payloadTooLarge, "body: more than \(limit) bytes after decompression, over the request limit")
                }
                output.append(contentsOf: repeatElement(0, count: min(output.count, limit + 1 - output.count)))
            }
            let result = output.withUnsafeMutableBufferPointer { buffer -> Int32 in
                stream.next_out = buffer.baseAddress! + produced
                stream.avail_out = uInt(buffer.count - produced)
                let result = CTouchpointZlib.inflate(&stream, Z_NO_FLUSH)
                produced = buffer.count - Int(stream.avail_out)
                return result
            }
            switch result {
            case Z_STREAM_END:
                guard produced <= limit else {
                    throw CollectorError(
                        .payloadTooLarge, "body: more than \(limit) bytes after decompression, over the request limit")
                }
                guard stream.avail_in == 0 else {
                    throw CollectorError(.invalidRequest, "body: data after the end of the compressed stream")
                }
                output.removeLast(output.count - produced)
                return output
            case Z_OK:
                continue
            case Z_BUF_ERROR where stream.avail_out == 0:
                continue  // the output buffer is full; it grows above
            case Z_BUF_ERROR:
                throw CollectorError(.invalidRequest, "body: the compressed stream is truncated")
            default:
                let reason = stream.msg.map { String(cString: $0) } ?? "error \(result)"
                throw CollectorError(.invalidRequest, "body: corrupt compressed stream (\(reason))")
            }
        }
    }
}
