import CZlib

/// gzip compression and decompression over the system's zlib: the one implementation shared by
/// the delivery queue (request bodies) and the collector (`Content-Encoding: gzip`).
///
/// ```swift
/// let body = try Gzip.compress(json)                       // a gzip member, RFC 1952
/// let back = try Gzip.decompress(body, maximumSize: 8 << 20)
/// ```
///
/// Decompression accepts gzip (several members in a row included) and zlib-wrapped data, and
/// stops with ``CompressionError/Code/tooLarge`` before producing more than `maximumSize` bytes,
/// so a small hostile body cannot exhaust memory.
public enum Gzip {
    /// How hard to compress: a zlib level from 1 (fastest) to 9 (smallest).
    public struct Level: Sendable, Hashable {
        /// The zlib level.
        public let value: Int32

        /// Creates a level; values are clamped to 1…9.
        public init(_ value: Int32) { self.value = min(9, max(1, value)) }

        /// Level 1: several times faster than the default, and JSON still shrinks 5–10 times.
        public static let fastest = Level(1)
        /// Level 6, zlib's default balance.
        public static let balanced = Level(6)
        /// Level 9: the smallest output, the slowest.
        public static let smallest = Level(9)
    }

    /// Whether `bytes` start with the gzip magic number (`1f 8b`).
    public static func isGzip(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        return iterator.next() == 0x1f && iterator.next() == 0x8b
    }

    /// Compresses `bytes` into one gzip member.
    /// - Parameters:
    ///   - bytes: the data to compress.
    ///   - level: how hard to compress.
    /// - Returns: the gzip data (a header, the deflate stream, a CRC-32 and the length).
    /// - Throws: ``CompressionError`` with code ``CompressionError/Code/failed`` when zlib cannot
    ///   start (out of memory).
    public static func compress(_ bytes: [UInt8], level: Level = .fastest) throws(CompressionError) -> [UInt8] {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(CompressionError) in try compress(raw, level: level) }
        }
        return try result.get()
    }

    /// Compresses the bytes of `buffer` into one gzip member.
    /// - Parameters:
    ///   - buffer: the data to compress.
    ///   - level: how hard to compress.
    /// - Returns: the gzip data.
    /// - Throws: ``CompressionError`` when zlib cannot start or fails.
    public static func compress(_ buffer: UnsafeRawBufferPointer, level: Level = .fastest) throws(CompressionError)
        -> [UInt8]
    {
        try checkSize(buffer)
        var stream = z_stream()
        // windowBits 15 + 16 asks for a gzip wrapper instead of zlib's.
        let status = deflateInit2_(
            &stream, level.value, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw failure("deflateInit2", status, stream) }
        defer { deflateEnd(&stream) }

        let bound = Int(deflateBound(&stream, uLong(buffer.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let input = buffer.bindMemory(to: UInt8.self)
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        stream.avail_in = uInt(buffer.count)
        let finished: Int32 = output.withUnsafeMutableBufferPointer { out in
            stream.next_out = out.baseAddress
            stream.avail_out = uInt(out.count)
            return deflate(&stream, Z_FINISH)
        }
        // With deflateBound's room, one call finishes the stream.
        guard finished == Z_STREAM_END else { throw failure("deflate", finished, stream) }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }

    /// Decompresses gzip (one or more members) or zlib data.
    /// - Parameters:
    ///   - bytes: the compressed data.
    ///   - maximumSize: the most bytes the result may hold (64 MiB by default).
    /// - Returns: the original bytes.
    /// - Throws: ``CompressionError``: ``CompressionError/Code/invalidData`` for anything that is
    ///   not complete, valid compressed data; ``CompressionError/Code/tooLarge`` past `maximumSize`.
    public static func decompress(_ bytes: [UInt8], maximumSize: Int = 64 << 20) throws(CompressionError) -> [UInt8] {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(CompressionError) in try decompress(raw, maximumSize: maximumSize) }
        }
        return try result.get()
    }

    /// Decompresses gzip (one or more members) or zlib data from `buffer`.
    /// - Parameters:
    ///   - buffer: the compressed data.
    ///   - maximumSize: the most bytes the result may hold.
    /// - Returns: the original bytes.
    /// - Throws: ``CompressionError`` as ``decompress(_:maximumSize:)-([UInt8],_)`` does.
    public static func decompress(_ buffer: UnsafeRawBufferPointer, maximumSize: Int = 64 << 20)
        throws(CompressionError) -> [UInt8]
    {
        guard !buffer.isEmpty else {
            throw CompressionError(code: .invalidData, reason: "no data: an empty body is not gzip")
        }
        try checkSize(buffer)
        var stream = z_stream()
        let input = buffer.bindMemory(to: UInt8.self)
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        stream.avail_in = uInt(buffer.count)
        // windowBits 15 + 32 detects a gzip or a zlib header by itself.
        let status = inflateInit2_(&stream, 15 + 32, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw failure("inflateInit2", status, stream) }
        defer { inflateEnd(&stream) }

        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(max(buffer.count * 4, 16 * 1024), 1 << 20))
        while true {
            let (code, produced): (Int32, Int) = chunk.withUnsafeMutableBufferPointer { out in
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                let code = inflate(&stream, Z_NO_FLUSH)
                return (code, out.count - Int(stream.avail_out))
            }
            if produced > 0 {
                guard output.count + produced <= maximumSize else {
                    throw CompressionError(
                        code: .tooLarge, reason: "the data decompresses to more than \(maximumSize) bytes")
                }
                output.append(contentsOf: chunk[0..<produced])
            }
            let consumed = buffer.count - Int(stream.avail_in)
            switch code {
            case Z_STREAM_END:
                guard stream.avail_in > 0 else { return output }
                // Another gzip member may follow (`cat a.gz b.gz`); anything else is garbage.
                guard isGzip(UnsafeRawBufferPointer(rebasing: buffer[consumed...])) else {
                    throw CompressionError(
                        code: .invalidData,
                        reason: "\(stream.avail_in) bytes of garbage after the end at byte \(consumed)")
                }
                inflateReset(&stream)
            case Z_OK:
                continue
            case Z_BUF_ERROR where stream.avail_in == 0:
                throw CompressionError(
                    code: .invalidData, reason: "the data ends before the stream does (byte \(consumed))")
            case Z_BUF_ERROR:
                continue
            case Z_DATA_ERROR, Z_NEED_DICT:
                throw CompressionError(
                    code: .invalidData,
                    reason: "not valid gzip or zlib data (zlib: \(message(stream))) at input byte \(consumed)")
            default:
                throw failure("inflate", code, stream)
            }
        }
    }

    /// zlib counts input and output in 32 bits: one call takes at most 2 GiB, so that compressed
    /// output (slightly larger in the worst case) fits too. Larger input is an error, not a trap.
    private static func checkSize(_ buffer: UnsafeRawBufferPointer) throws(CompressionError) {
        guard buffer.count <= 1 << 31 else {
            throw CompressionError(code: .tooLarge, reason: "\(buffer.count) bytes: zlib takes at most 2 GiB at once")
        }
    }

    private static func message(_ stream: z_stream) -> String {
        stream.msg.map { String(cString: $0) } ?? "no detail"
    }

    private static func failure(_ call: String, _ status: Int32, _ stream: z_stream) -> CompressionError {
        CompressionError(code: .failed, reason: "\(call) returned \(status) (zlib: \(message(stream)))")
    }
}
