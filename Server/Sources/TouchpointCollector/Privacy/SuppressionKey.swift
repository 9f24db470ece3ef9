import Crypto
import Foundation

/// The keyed hash that a deletion keeps of each id in place of the id: enough to refuse the id's
/// events later (the suppression list) and to show which ids a request named, and nothing an
/// administrator, a backup or an attacker with the database can turn back into the id without
/// the key, which lives in the data directory's `credentials.json`, not in the database.
///
/// HMAC-SHA-256 of the source, the kind and the id (each followed by a zero byte, which no id
/// holds), cut to 16 bytes and written as 32 hex digits.
struct SuppressionKey: Sendable {
    /// The key's bytes (`SymmetricKey` is not `Sendable`; one is made for each hash).
    private let bytes: [UInt8]

    /// The key written as 64 hex digits; nil for anything else.
    init?(hex: String) {
        guard hex.utf8.count == 64, let bytes = Self.bytes(hex) else { return nil }
        self.bytes = bytes
    }

    /// The hash that stands for `id` of `kind` in `source`.
    func hash(source: String, kind: SuppressedID.Kind, id: String) -> String {
        var message = Data()
        for part in [source, kind.rawValue, id] {
            message.append(contentsOf: Array(part.utf8))
            message.append(0)
        }
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: bytes))
        return code.prefix(16).map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    /// The suppression of `id`, as stored: its hash in place of the id.
    func hashed(_ id: SuppressedID) -> SuppressedID {
        SuppressedID(source: id.source, kind: id.kind, id: hash(source: id.source, kind: id.kind, id: id.id))
    }

    private static func bytes(_ hex: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in hex.utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return high == nil ? bytes : nil
    }
}
