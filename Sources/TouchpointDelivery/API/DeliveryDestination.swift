import Foundation
import TouchpointCore

/// Where events go: a collector's endpoint and the write key that identifies the source.
///
/// The endpoint may be the collector's base URL (`https://collector.example.com`), to which
/// `/v1/batch` is added, or the full batch URL. Each destination has its own cursor, retry state
/// and upload queue, named by ``id``.
public struct DeliveryDestination: Sendable, Hashable {
    /// The URL batches are posted to.
    public let batchURL: URL
    /// The source's write key, sent as HTTP Basic auth (`writeKey:` with an empty password).
    public let writeKey: String

    /// Creates a destination.
    /// - Parameters:
    ///   - endpoint: the collector's base URL, or its full `/v1/batch` URL.
    ///   - writeKey: the write key of the source.
    public init(endpoint: URL, writeKey: String) {
        let text = endpoint.absoluteString
        if text.hasSuffix("/v1/batch") {
            batchURL = endpoint
        } else {
            let base = text.hasSuffix("/") ? String(text.dropLast()) : text
            batchURL = URL(string: base + "/v1/batch") ?? endpoint.appendingPathComponent("v1/batch")
        }
        self.writeKey = writeKey
    }

    /// A stable name for this destination's state file: a hash of the batch URL and write key
    /// (the key itself is never written to disk).
    public var id: String { StableHash.hex(of: batchURL.absoluteString + "\n" + writeKey) }

    /// The `Authorization` header value: `Basic base64(writeKey + ":")`.
    public var authorization: String { TransportHeaders.basicAuthorization(user: writeKey) }
}
