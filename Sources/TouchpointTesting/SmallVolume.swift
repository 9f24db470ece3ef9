#if os(Linux)
import Foundation
import Glibc

/// A small file system of its own (a `tmpfs` of a fixed size) for tests of a full disk: fill it,
/// watch writes fail, free space and watch them work again. Linux only, and only as root (CI runs
/// as root); unmounted when released.
///
/// ```swift
/// let volume = try SmallVolume(bytes: 256 * 1024)
/// let filler = try volume.fill()                      // the disk is full
/// // … writes under volume.path fail with ENOSPC …
/// try FileManager.default.removeItem(atPath: filler)  // space returns
/// ```
///
/// A test that needs one and cannot mount it should fail where one is required
/// (``isRequired``: `TOUCHPOINT_REQUIRE_TMPFS=1`, as CI sets) and be skipped elsewhere
/// (``canMount``).
public final class SmallVolume: Sendable {
    /// Why a volume could not be mounted.
    public struct MountError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The mount point.
    public let url: URL
    /// The volume's size in bytes.
    public let bytes: Int
    private let directory: TemporaryDirectory

    /// The mount point's path.
    public var path: String { url.path }

    /// Mounts a `tmpfs` of `bytes` (rounded up to whole pages by the kernel) on a new temporary
    /// directory.
    /// - Throws: ``MountError`` naming the reason: not root, or no `tmpfs` in this kernel or
    ///   container.
    public init(bytes: Int) throws {
        directory = try TemporaryDirectory(prefix: "small-volume")
        url = directory.url
        self.bytes = bytes
        guard mount("tmpfs", directory.path, "tmpfs", 0, "size=\(bytes),mode=0755") == 0 else {
            let reason = String(cString: strerror(errno))
            throw MountError(
                description:
                    "cannot mount a \(bytes)-byte tmpfs on \(directory.path): \(reason) (errno \(errno)); the full-disk tests need root (uid \(getuid())) and a kernel that allows tmpfs mounts"
            )
        }
    }

    deinit { _ = umount2(directory.path, Int32(MNT_DETACH)) }

    /// Whether this process can mount one (tried once, with a volume of one page).
    public static let canMount: Bool = (try? SmallVolume(bytes: 4096)) != nil

    /// Whether tests must not skip for want of a volume: `TOUCHPOINT_REQUIRE_TMPFS=1`, as CI sets.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["TOUCHPOINT_REQUIRE_TMPFS"] == "1" }

    /// Fills the volume with one file until the disk refuses another byte.
    /// - Returns: the file's path: remove it to free the space.
    @discardableResult
    public func fill() throws -> String {
        let filler = path + "/filler-\(UUID().uuidString)"
        let descriptor = open(filler, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw MountError(description: "cannot create \(filler): errno \(errno)") }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0x2E, count: 4096)
        while true {
            let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written > 0 { continue }
            if written < 0 && errno == EINTR { continue }
            break
        }
        // The last partial page too: byte by byte until nothing more fits.
        var one: UInt8 = 0x2E
        while write(descriptor, &one, 1) == 1 {}
        return filler
    }

    /// Bytes still free on the volume.
    public var freeBytes: Int {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return 0 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }
}
#endif
