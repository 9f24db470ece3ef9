/// The library named in every message's `context.library`, so a collector can tell which SDK
/// and version sent it.
public struct DeliveryLibrary: Sendable, Hashable {
    /// The library's name, `touchpoint-swift` by default.
    public var name: String
    /// The library's version.
    public var version: String

    /// Creates a library description.
    public init(name: String, version: String) {
        self.name = name
        self.version = version
    }

    /// This SDK.
    public static let touchpoint = DeliveryLibrary(name: "touchpoint-swift", version: "0.1.0")
}
