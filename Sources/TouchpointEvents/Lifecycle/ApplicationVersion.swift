import Foundation

/// The app's marketing version and build number, as the lifecycle events report them.
public struct ApplicationVersion: Sendable, Hashable {
    /// `CFBundleShortVersionString`, e.g. `2.1`.
    public var version: String
    /// `CFBundleVersion`, e.g. `210`.
    public var build: String

    /// - Parameters:
    ///   - version: the marketing version.
    ///   - build: the build number.
    public init(version: String, build: String) {
        self.version = version
        self.build = build
    }

    /// The main bundle's (empty strings where the bundle has no such key, as on Linux).
    public static var main: ApplicationVersion {
        let info = Bundle.main.infoDictionary ?? [:]
        return ApplicationVersion(
            version: info["CFBundleShortVersionString"] as? String ?? "",
            build: info["CFBundleVersion"] as? String ?? "")
    }
}
