#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Reads the tail of a file of terminated records: where its last whole record ends, and that
/// record. Shared by ``AppendOnlyFile`` and ``MappedLogFile``.
enum LogFileScan {
    /// Where the whole records of a file end, and what lies after them.
    struct Tail: Equatable {
        /// The offset just past the last terminator (0 when there is none).
        var whole: Int64
        /// The bytes after it up to the last byte that is not zero: a torn record. Zero bytes
        /// after that are space a mapped writer had allocated, not data.
        var tornBytes: Int64
    }

    static func size(_ descriptor: Int32, path: String) throws(FileError) -> Int64 {
        let end = lseek(descriptor, 0, SEEK_END)
        guard end >= 0 else { throw FileError.current("lseek", path) }
        return Int64(end)
    }

    /// Scans back from `size` for the last `terminator`.
    static func tail(_ descriptor: Int32, size: Int64, terminator: UInt8, path: String) throws(FileError) -> Tail {
        guard size > 0 else { return Tail(whole: 0, tornBytes: 0) }
        // A closed log ends with its terminator: the first small read usually finds it. The
        // zeros a mapped writer allocated take larger reads.
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var step: Int64 = 512
        var end = size
        var lastData: Int64?  // the offset just past the last byte that is not zero
        while end > 0 {
            let start = max(0, end - step)
            step = min(step * 8, Int64(chunk.count))
            let count = Int(end - start)
            try readFully(descriptor, into: &chunk, count: count, at: start, path: path)
            if lastData == nil, let last = chunk[0..<count].lastIndex(where: { $0 != 0 }) {
                lastData = start + Int64(last) + 1
            }
            if let last = chunk[0..<count].lastIndex(of: terminator) {
                let whole = start + Int64(last) + 1
                return Tail(whole: whole, tornBytes: max(0, (lastData ?? whole) - whole))
            }
            end = start
        }
        return Tail(whole: 0, tornBytes: lastData ?? 0)
    }

    /// The last whole record before `end` (without its terminator), or nil when there is none or
    /// it is longer than `maximumLength`.
    static func lastRecord(
        _ descriptor: Int32, end: Int64, terminator: UInt8, maximumLength: Int, path: String
    ) throws(FileError) -> [UInt8]? {
        guard end > 0 else { return nil }
        let start = max(0, end - Int64(maximumLength) - 1)
        let count = Int(end - start)
        var chunk = [UInt8](repeating: 0, count: count)
        try readFully(descriptor, into: &chunk, count: count, at: start, path: path)
        let body = chunk.dropLast()  // the final terminator
        if let previous = body.lastIndex(of: terminator) { return Array(body[(previous + 1)...]) }
        return start == 0 ? Array(body) : nil
    }

    private static func readFully(
        _ descriptor: Int32, into buffer: inout [UInt8], count: Int, at offset: Int64, path: String
    ) throws(FileError) {
        let read = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        guard read == count else {
            throw read < 0 ? FileError.current("pread", path) : FileError(operation: "pread", path: path, code: EIO)
        }
    }
}
