/// An app's data version, `MAJOR.MINOR.PATCH`. A change of ``major`` drops the scenario data
/// the store kept for the app (see ``DefaultStore``); minor and patch changes keep it.
///
/// ```swift
/// let version = SemanticVersion(2, 1, 0)
/// SemanticVersion("2.1.0") == version  // true
/// ```
public struct SemanticVersion: Sendable, Hashable, Comparable, Codable, CustomStringConvertible,
    LosslessStringConvertible
{
    /// Incompatible data changes.
    public var major: Int
    /// Compatible additions.
    public var minor: Int
    /// Fixes.
    public var patch: Int

    /// Creates a version, as the seed writes it: `SemanticVersion(1, 2, 0)`.
    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// Creates a version from labelled parts.
    public init(major: Int, minor: Int = 0, patch: Int = 0) {
        self.init(major, minor, patch)
    }

    /// Reads `MAJOR.MINOR.PATCH` (non-negative decimal numbers); nil for anything else.
    public init?(_ description: String) {
        let parts = description.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (48...57).contains($0) } }),
            let major = Int(parts[0]), let minor = Int(parts[1]), let patch = Int(parts[2])
        else { return nil }
        self.init(major, minor, patch)
    }

    /// `MAJOR.MINOR.PATCH`.
    public var description: String { "\(major).\(minor).\(patch)" }

    /// Orders by major, then minor, then patch.
    public static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    /// Decodes `"MAJOR.MINOR.PATCH"`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let version = SemanticVersion(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected MAJOR.MINOR.PATCH, found \(text)")
        }
        self = version
    }

    /// Encodes `"MAJOR.MINOR.PATCH"`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
