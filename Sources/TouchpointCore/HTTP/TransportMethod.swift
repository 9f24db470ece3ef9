/// An HTTP request method such as `GET` or `POST`.
///
/// Methods are case-sensitive tokens (RFC 9110 §9.1); the common ones have static names.
public struct TransportMethod: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The method token as sent on the wire.
    public let rawValue: String

    /// Creates a method from its token, e.g. `"PATCH"`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `GET`.
    public static let get = TransportMethod(rawValue: "GET")
    /// `HEAD`.
    public static let head = TransportMethod(rawValue: "HEAD")
    /// `POST`.
    public static let post = TransportMethod(rawValue: "POST")
    /// `PUT`.
    public static let put = TransportMethod(rawValue: "PUT")
    /// `PATCH`.
    public static let patch = TransportMethod(rawValue: "PATCH")
    /// `DELETE`.
    public static let delete = TransportMethod(rawValue: "DELETE")

    public var description: String { rawValue }
}
