import Foundation

/// A fresh directory under the system's temporary folder, deleted when the value is released.
///
/// ```swift
/// let directory = try TemporaryDirectory()
/// let recorder = EventRecorder(directory: directory.url)
/// ```
public final class TemporaryDirectory: Sendable {
    /// The directory.
    public let url: URL

    /// The directory's path.
    public var path: String { url.path }

    /// Creates the directory.
    /// - Parameter prefix: the start of its name, to tell test folders apart.
    public init(prefix: String = "touchpoint") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// A path inside the directory.
    public func appending(_ component: String) -> URL { url.appendingPathComponent(component) }
}
