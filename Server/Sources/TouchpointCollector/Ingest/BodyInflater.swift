import TouchpointCore

/// Decompresses gzip (and zlib `deflate`) request bodies, never past a limit.
///
/// A thin layer over ``TouchpointCore/Gzip`` (the one zlib binding in the package, shared with the
/// delivery queue) that turns its errors into the collector's HTTP errors.
public enum BodyInflater {
    /// Inflates `input`.
    /// - Parameters:
    ///   - input: the compressed bytes (gzip, one or more members, or a zlib stream; the header tells which).
    ///   - limit: the most bytes the output may have.
    /// - Returns: the decompressed bytes.
    /// - Throws: ``CollectorError`` `payload_too_large` when the output would exceed `limit`;
    ///   `invalid_request` when the stream is corrupt, truncated or followed by other data.
    public static func inflate(_ input: UnsafeRawBufferPointer, limit: Int) throws(CollectorError) -> [UInt8] {
        do {
            return try Gzip.decompress(input, maximumSize: limit)
        } catch {
            switch error.code {
            case .tooLarge:
                throw CollectorError(
                    .payloadTooLarge, "body: more than \(limit) bytes after decompression, over the request limit")
            case .invalidData:
                throw CollectorError(.invalidRequest, "body: \(error.reason)")
            default:
                throw CollectorError(.invalidRequest, "body: cannot decompress (\(error.reason))")
            }
        }
    }
}
