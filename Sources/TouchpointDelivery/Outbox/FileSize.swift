#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// The size of a file, from its end offset (`struct stat` is claimed by different modules in
/// different build modes on Linux, which member-import checking rejects).
enum FileSize {
    /// The size in bytes of the file at `path`, or nil when it does not exist or cannot be opened.
    static func of(_ path: String) -> Int64? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { _ = close(descriptor) }
        let end = lseek(descriptor, 0, SEEK_END)
        return end < 0 ? nil : Int64(end)
    }
}
