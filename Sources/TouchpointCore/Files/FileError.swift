#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// A file-system operation that failed: which operation, on which path, and the system's reason.
///
/// ```
/// write /data/users/anon/sessions/…/events.jsonl: No space left on device (errno 28)
/// ```
public struct FileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The operation that failed: `open`, `write`, `fsync`, `rename`, ….
    public let operation: String
    /// The file or directory it was applied to.
    public let path: String
    /// The `errno` value the system reported.
    public let code: Int32

    public init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// Whether the failure means the disk (or the user's quota) is full.
    public var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT }

    public var description: String {
        let reason = strerror(code).map { String(cString: $0) } ?? "unknown error"
        return "\(operation) \(path): \(reason) (errno \(code))"
    }

    /// An error for the current `errno`.
    public static func current(_ operation: String, _ path: String) -> FileError {
        FileError(operation: operation, path: path, code: errno)
    }
}
