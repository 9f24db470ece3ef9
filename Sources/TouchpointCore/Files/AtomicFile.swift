import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Small whole-file reads and writes with crash-safe replacement.
///
/// A write goes to a temporary file beside the target, is flushed to disk when asked, and is
/// renamed over the target, so a reader sees either the old content or the new, never a mix.
public enum AtomicFile {
    /// Replaces the file at `path` with `bytes`.
    /// - Parameters:
    ///   - bytes: the new content.
    ///   - path: the file to replace; its directory is created when missing.
    ///   - durable: whether to `fsync` the data and the directory before returning.
    ///   - mode: the file's permissions from its creation on (less the process's umask): `0o644` by
    ///     default, `0o600` for secrets.
    /// - Throws: ``FileError`` naming the operation and path that failed (a full disk included).
    public static func write(_ bytes: [UInt8], to path: String, durable: Bool = true, mode: mode_t = 0o644)
        throws(FileError)
    {
        try write(to: path, durable: durable, mode: mode) { (append) throws(FileError) in
            try bytes.withUnsafeBytes { raw in Result { () throws(FileError) in try append(raw) } }.get()
        }
    }

    /// Replaces the file at `path` with what `body` appends, in order, through the function it is
    /// given: for content too large to put together in memory first. Crash-safe as
    /// ``write(_:to:durable:mode:)``: the content goes to a temporary file renamed over `path`
    /// only when `body` returns.
    /// - Throws: ``FileError`` naming the operation and path that failed, or what `body` threw.
    public static func write(
        to path: String, durable: Bool = true, mode: mode_t = 0o644,
        _ body: (_ append: (UnsafeRawBufferPointer) throws(FileError) -> Void) throws(FileError) -> Void
    ) throws(FileError) {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try createDirectory(directory) }
        let temporary = path + ".tmp-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw FileError.current("open", temporary) }
        do throws(FileError) {
            try body { (raw) throws(FileError) in try writeAll(descriptor, raw, path: temporary) }
            if durable, fsync(descriptor) != 0 { throw FileError.current("fsync", temporary) }
            guard close(descriptor) == 0 else { throw FileError.current("close", temporary) }
        } catch {
            _ = close(descriptor)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let failure = FileError.current("rename", path)
            unlink(temporary)
            throw failure
        }
        if durable && !directory.isEmpty { syncDirectory(directory) }
    }

    /// Reads the file at `path` through `body`, given the file's size and a ``Reader`` of its
    /// bytes from the start: for content read straight into where it is kept. Nil when the file
    /// does not exist.
    /// - Throws: ``FileError`` for any failure other than the file being absent, or what `body`
    ///   threw.
    public static func read<Value>(_ path: String, _ body: (_ size: Int, _ reader: Reader) throws -> Value) throws
        -> Value?
    {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw FileError.current("open", path)
        }
        defer { _ = close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw FileError.current("fstat", path) }
        return try body(Int(status.st_size), Reader(descriptor: descriptor, path: path))
    }

    /// The bytes of a file open for ``read(_:_:)``, in order.
    public struct Reader {
        fileprivate let descriptor: Int32
        fileprivate let path: String

        /// Fills `buffer` with the file's next bytes.
        /// - Throws: ``FileError`` when reading fails or the file ends first.
        public func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(FileError) {
            try AtomicFile.transferAll(buffer.count, "read", path) {
                systemRead(descriptor, buffer.baseAddress! + $0, buffer.count - $0)
            }
        }
    }

    /// The whole content of the file at `path`, or nil when it does not exist.
    /// - Throws: ``FileError`` for any failure other than the file being absent.
    public static func read(_ path: String) throws(FileError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw FileError.current("open", path)
        }
        defer { _ = close(descriptor) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError.current("read", path)
            }
            if count == 0 { return result }
            result.append(contentsOf: chunk[0..<count])
        }
    }

    /// Removes the file at `path` durably (its directory entry is flushed); an absent file is not
    /// an error.
    /// - Throws: ``FileError`` for any failure other than the file being absent.
    public static func remove(_ path: String) throws(FileError) {
        if unlink(path) != 0 {
            if errno == ENOENT { return }
            throw FileError.current("unlink", path)
        }
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { syncDirectory(directory) }
    }

    /// Creates `path` and its missing parents.
    /// - Parameters:
    ///   - path: the directory.
    ///   - mode: the permissions of each directory created (less the umask), `0o755` by default;
    ///     an existing directory keeps its own.
    /// - Throws: ``FileError`` when a component cannot be created.
    public static func createDirectory(_ path: String, mode: mode_t = 0o755) throws(FileError) {
        if mkdir(path, mode) == 0 || errno == EEXIST { return }
        guard errno == ENOENT else { throw FileError.current("mkdir", path) }
        let parent = (path as NSString).deletingLastPathComponent
        guard !parent.isEmpty, parent != path else { throw FileError.current("mkdir", path) }
        try createDirectory(parent, mode: mode)
        if mkdir(path, mode) != 0 && errno != EEXIST { throw FileError.current("mkdir", path) }
    }

    /// Flushes the data of the file at `path` to disk, and its size when that changed
    /// (`fdatasync` on Linux; `fsync` would also commit the file system's journal for the file's
    /// new modification time every time), opening it anew.
    /// - Throws: ``FileError`` naming the call and the path when it cannot be opened or flushed.
    public static func syncData(_ path: String) throws(FileError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileError.current("open", path) }
        defer { _ = close(descriptor) }
        #if os(Linux)
        guard fdatasync(descriptor) == 0 else { throw FileError.current("fdatasync", path) }
        #else
        guard fsync(descriptor) == 0 else { throw FileError.current("fsync", path) }
        #endif
    }

    /// Flushes a directory entry (a create or rename in it) to disk; failures are ignored
    /// because not every file system supports it.
    public static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        _ = close(descriptor)
    }

    /// Writes all of `bytes` to `descriptor`, retrying short writes and interruptions.
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String) throws(FileError) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(FileError) in try writeAll(descriptor, raw, path: path) }
        }
        try result.get()
    }

    static func writeAll(_ descriptor: Int32, _ raw: UnsafeRawBufferPointer, path: String) throws(FileError) {
        try transferAll(raw.count, "write", path) { systemWrite(descriptor, raw.baseAddress! + $0, raw.count - $0) }
    }

    /// Moves `count` bytes by calls of `step` (given the bytes moved so far; returning how many
    /// more it moved, or -1 with `errno` set), retrying short moves and interruptions; a step that
    /// moves nothing (a file that ends first) is an `EIO` of `operation`.
    static func transferAll(_ count: Int, _ operation: String, _ path: String, _ step: (Int) -> Int) throws(FileError) {
        var offset = 0
        while offset < count {
            let moved = step(offset)
            if moved < 0 {
                if errno == EINTR { continue }
                throw FileError.current(operation, path)
            }
            if moved == 0 { throw FileError(operation: operation, path: path, code: EIO) }
            offset += moved
        }
    }
}

// `read`, `write` and `close` are shadowed by methods in some scopes; these names always mean the
// system calls.
@inline(__always)
func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

@inline(__always)
func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

@inline(__always)
func systemClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}

@inline(__always)
func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}
