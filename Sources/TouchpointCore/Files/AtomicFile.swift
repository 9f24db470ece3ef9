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
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try createDirectory(directory) }
        let temporary = path + ".tmp-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw FileError.current("open", temporary) }
        do throws(FileError) {
            try writeAll(descriptor, bytes, path: temporary)
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
        var offset = 0
        while offset < raw.count {
            let written = systemWrite(descriptor, raw.baseAddress! + offset, raw.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw FileError.current("write", path)
            }
            if written == 0 { throw FileError(operation: "write", path: path, code: EIO) }
            offset += written
        }
    }
}

// `read` and `write` are shadowed by methods in some scopes; these names always mean the syscalls.
@inline(__always)
func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

@inline(__always)
func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
