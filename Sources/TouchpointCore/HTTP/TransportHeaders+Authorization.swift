import Foundation

extension TransportHeaders {
    /// An HTTP Basic `Authorization` value: `Basic base64(user:password)`. Segment-style write keys
    /// go as the user name with an empty password.
    public static func basicAuthorization(user: String, password: String = "") -> String {
        "Basic " + Data((user + ":" + password).utf8).base64EncodedString()
    }
}
