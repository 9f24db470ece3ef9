#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// An open file that only grows by whole records, such as a JSON Lines log.
///
/// Each ``append(_:)`` is one `write(2)` to a descriptor opened with `O_APPEND`: when it
/// returns, the bytes are in the operating system's page cache and survive the process being
/// killed. Durability against power loss comes from ``sync()``, which the owner calls on its own
/// schedule. A failed or short write is rolled back by truncating to the last whole record, so
/// the file never keeps half a record.
///
/// Not synchronized: the owner serializes ``append(_:)`` calls. ``sync()`` may run concurrently.
public final class AppendOnlyFile: @unchecked Sendable {
    // Safe: `descriptor` is immutable and only closed in deinit; `length` is only touched by
    // `append`, which the owner serializes.

    /// The file's path.
    public let path: String
    private let descriptor: Int32
    private let terminator: UInt8
    /// The length of the file up to the end of its last whole record.
    public private(set) var length: Int64
    /// How many bytes of a torn final record were removed when the file was opened.
    public let repairedBytes: Int64

    /// Opens (creating when absent) the file at `path` for appending.
    ///
    /// When the file does not end with `terminator` (a previous writer was killed mid-record),
    /// the partial record is cut off and its size reported in ``repairedBytes``.
    /// - Parameters:
    ///   - path: the file; its directory must exist.
    ///   - terminator: the byte that ends every record, `\n` for JSON Lines.
    /// - Throws: ``FileError`` when the file cannot be opened, inspected or repaired.
    public init(path: String, terminator: UInt8 = UInt8(ascii: "\n")) throws(FileError) {
        self.path = path
        let descriptor = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileError.current("open", path) }
        do throws(FileError) {
            let size = try LogFileScan.size(descriptor, path: path)
            let whole = try LogFileScan.tail(descriptor, size: size, terminator: terminator, path: path).whole
            if whole < size, ftruncate(descriptor, off_t(whole)) != 0 { throw FileError.current("ftruncate", path) }
            self.descriptor = descriptor
            self.terminator = terminator
            self.length = whole
            self.repairedBytes = size - whole
        } catch {
            _ = close(descriptor)
            throw error
        }
    }

    deinit { _ = close(descriptor) }

    /// Appends one or more whole records.
    ///
    /// On failure the file is truncated back to its previous length, so a later append starts
    /// on a record boundary.
    /// - Throws: ``FileError`` (``FileError/isOutOfSpace`` when the disk is full).
    public func append(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        guard bytes.count > 0 else { return }
        do throws(FileError) {
            // One write(2) per call: with O_APPEND the whole record lands at the end, and a
            // regular file accepts it in one piece unless the disk fills mid-way.
            try AtomicFile.writeAll(descriptor, bytes, path: path)
            length += Int64(bytes.count)
        } catch {
            _ = ftruncate(descriptor, off_t(length))
            throw error
        }
    }

    /// Appends one or more whole records.
    public func append(_ bytes: [UInt8]) throws(FileError) {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(FileError) in try append(raw) } }
        try result.get()
    }

    /// Flushes everything appended so far to stable storage (`fsync`).
    public func sync() throws(FileError) {
        if fsync(descriptor) != 0 { throw FileError.current("fsync", path) }
    }

    /// The last whole record (without its terminator), or nil when the file is empty or the
    /// record is longer than `maximumLength`.
    public func lastRecord(maximumLength: Int = 64 * 1024) throws(FileError) -> [UInt8]? {
        try LogFileScan.lastRecord(
            descriptor, end: length, terminator: terminator, maximumLength: maximumLength, path: path)
    }
}
