#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Streams the lines of a JSON Lines file in bounded memory.
///
/// The file is read in chunks; each complete line is handed to the caller with its byte offset,
/// so memory stays flat however large the file is. Reading stops at the size the file had when
/// reading began (a concurrent writer's later lines are left for the next read). A final line without its newline (a writer
/// killed mid-record, or still writing) is reported as ``Line/isComplete`` `false`, and a line
/// longer than ``maximumLineLength`` is skipped whole and reported, never buffered.
///
/// ```swift
/// let reader = JSONLinesReader(path: eventsPath)
/// try reader.forEachLine { line in
///     guard line.isComplete else { return true }
///     let value = try? JSONParser.parse(line.bytes)
///     return true  // keep reading
/// }
/// ```
public struct JSONLinesReader: Sendable {
    /// One line of the file, without its newline.
    public struct Line {
        /// The line's bytes, valid only during the callback.
        public let bytes: UnsafeBufferPointer<UInt8>
        /// The offset of the line's first byte in the file.
        public let offset: Int64
        /// The offset just past the line's newline: where the next line starts.
        public let endOffset: Int64
        /// The 1-based line number, counted from where reading started.
        public let number: Int
        /// False for a last line that has no newline yet.
        public let isComplete: Bool
        /// True when the line was longer than the reader's limit; ``bytes`` is then empty.
        public let isOversized: Bool
    }

    /// The file to read.
    public let path: String
    /// Lines longer than this many bytes are skipped and reported as oversized.
    public var maximumLineLength: Int
    /// How many bytes to read from the file at a time.
    public var chunkSize: Int

    public init(path: String, maximumLineLength: Int = 1 << 20, chunkSize: Int = 64 * 1024) {
        self.path = path
        self.maximumLineLength = maximumLineLength
        self.chunkSize = chunkSize
    }

    /// Calls `body` for each line from byte `offset` on, until the end of the file (or `limit`)
    /// or until `body` returns false.
    ///
    /// Zero bytes where a line would start are skipped: they are space a ``MappedLogFile`` has
    /// allocated but not yet written (at the end of an open log), never a record.
    /// - Returns: the offset just past the last complete line that was handed out, which is
    ///   where a later read should resume.
    /// - Throws: ``FileError`` when the file cannot be read (absent files read as empty), or
    ///   what `body` throws.
    @discardableResult
    public func forEachLine(from offset: Int64 = 0, upTo limit: Int64? = nil, _ body: (Line) throws -> Bool) throws
        -> Int64
    {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return offset }
            throw FileError.current("open", path)
        }
        defer { _ = close(descriptor) }
        // Read what the file holds now, and only regular files: a device or FIFO (or a file that
        // keeps growing) must not keep the reader going forever.
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw FileError.current("fstat", path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw FileError(operation: "read", path: path, code: EINVAL) }
        let size = min(Int64(info.st_size), limit ?? .max)
        if offset > 0, lseek(descriptor, off_t(offset), SEEK_SET) < 0 { throw FileError.current("lseek", path) }

        var pending: [UInt8] = []  // the start of a line that continues in the next chunk
        var pendingStart = offset
        var skippingOversized = false
        var position = offset  // file offset of chunk[0]
        var lineNumber = 0
        var resume = offset
        var chunk = [UInt8](repeating: 0, count: chunkSize)

        while true {
            let wanted = Int(min(Int64(chunkSize), size - position))
            if wanted <= 0 { break }
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError.current("read", path)
            }
            if count == 0 { break }
            var keepGoing = true
            try chunk.withUnsafeBufferPointer { buffer in
                var lineStart = 0
                var index = 0
                while index < count {
                    if buffer[index] == 0 && index == lineStart && pending.isEmpty && !skippingOversized {
                        index += 1
                        lineStart = index
                        continue
                    }
                    guard buffer[index] == UInt8(ascii: "\n") else {
                        index += 1
                        continue
                    }
                    lineNumber += 1
                    let lineOffset = pending.isEmpty && !skippingOversized ? position + Int64(lineStart) : pendingStart
                    let end = position + Int64(index) + 1
                    if skippingOversized {
                        skippingOversized = false
                        keepGoing = try body(
                            Line(
                                bytes: UnsafeBufferPointer(start: nil, count: 0), offset: lineOffset,
                                endOffset: end, number: lineNumber, isComplete: true, isOversized: true))
                    } else if pending.isEmpty && index - lineStart > maximumLineLength {
                        keepGoing = try body(
                            Line(
                                bytes: UnsafeBufferPointer(start: nil, count: 0), offset: lineOffset,
                                endOffset: end, number: lineNumber, isComplete: true, isOversized: true))
                    } else if pending.isEmpty {
                        let slice = UnsafeBufferPointer(rebasing: buffer[lineStart..<index])
                        keepGoing = try body(
                            Line(
                                bytes: slice, offset: lineOffset, endOffset: end,
                                number: lineNumber, isComplete: true, isOversized: false))
                    } else {
                        pending.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[lineStart..<index]))
                        if pending.count > maximumLineLength {
                            keepGoing = try body(
                                Line(
                                    bytes: UnsafeBufferPointer(start: nil, count: 0),
                                    offset: lineOffset, endOffset: end, number: lineNumber, isComplete: true,
                                    isOversized: true))
                        } else {
                            keepGoing = try pending.withUnsafeBufferPointer { joined in
                                try body(
                                    Line(
                                        bytes: joined, offset: lineOffset, endOffset: end,
                                        number: lineNumber, isComplete: true, isOversized: false))
                            }
                        }
                        pending.removeAll(keepingCapacity: true)
                    }
                    resume = end
                    index += 1
                    lineStart = index
                    if !keepGoing { return }
                }
                // Carry the unterminated rest into the next chunk.
                if lineStart < count {
                    if pending.isEmpty && !skippingOversized { pendingStart = position + Int64(lineStart) }
                    if !skippingOversized {
                        pending.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[lineStart..<count]))
                        if pending.count > maximumLineLength {
                            pending.removeAll()
                            skippingOversized = true
                        }
                    }
                }
            }
            if !keepGoing { return resume }
            position += Int64(count)
        }
        if skippingOversized || !pending.isEmpty {
            lineNumber += 1
            let tail = Line(
                bytes: UnsafeBufferPointer(start: nil, count: 0), offset: pendingStart, endOffset: position,
                number: lineNumber, isComplete: false, isOversized: skippingOversized)
            if skippingOversized {
                _ = try body(tail)
            } else {
                _ = try pending.withUnsafeBufferPointer { joined in
                    try body(
                        Line(
                            bytes: joined, offset: pendingStart, endOffset: position, number: lineNumber,
                            isComplete: false, isOversized: false))
                }
            }
        }
        return resume
    }
}
