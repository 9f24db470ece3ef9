import Foundation
import TouchpointCore

/// The write key and admin token a collector uses: given by the caller, or created on first start
/// and kept in `credentials.json` in the data directory so a restart keeps them.
public struct CollectorCredentials: Sendable, Hashable {
    /// The default source's write key.
    public var writeKey: String
    /// The token for `Authorization: Bearer …` on the query API and config writes.
    public var adminToken: String
    /// The secret suppressed ids are hashed with (``SuppressionKey``): 64 hex digits. Collectors
    /// that share one PostgreSQL database need the same one.
    public var suppressionKey: String

    /// Creates credentials; without a suppression key, one is drawn now.
    public init(writeKey: String, adminToken: String, suppressionKey: String? = nil) {
        self.writeKey = writeKey
        self.adminToken = adminToken
        self.suppressionKey = suppressionKey ?? Self.randomHex(bytes: 32)
    }

    /// The file name inside the data directory.
    public static let fileName = "credentials.json"

    /// Loads the credentials kept in `directory`, creating any that are missing; values passed in
    /// win over stored ones for this run and are not written.
    /// - Throws: when the directory or file cannot be read or written, or the file is not a JSON
    ///   object of strings (``CollectorError/Code/invalidConfiguration``, naming the file and member;
    ///   the file is then left as it is rather than replaced with new credentials).
    static func resolve(
        directory: URL, writeKey: String?, adminToken: String?, suppressionKey: String? = nil
    ) throws -> CollectorCredentials {
        if let writeKey, let adminToken, let suppressionKey {
            return CollectorCredentials(writeKey: writeKey, adminToken: adminToken, suppressionKey: suppressionKey)
        }
        let file = directory.appendingPathComponent(fileName).path
        var stored: [String: JSONValue] = [:]
        if let bytes = try AtomicFile.read(file) {
            let document: JSONValue
            do {
                document = try JSONParser.parse(bytes)
            } catch {
                throw CollectorError(.invalidConfiguration, "\(file): \(error.description)")
            }
            guard let members = document.objectValue else {
                throw CollectorError(
                    .invalidConfiguration, "\(file): expected an object, found \(document.typeName)")
            }
            for key in ["writeKey", "adminToken", "suppressionKey"] {
                if let value = members[key], value.stringValue == nil {
                    throw CollectorError(
                        .invalidConfiguration, "\(file): \(key): expected a string, found \(value.typeName)")
                }
            }
            stored = members
        }
        var changed = false
        for (key, length) in [("writeKey", 16), ("adminToken", 24), ("suppressionKey", 32)]
        where stored[key]?.stringValue?.isEmpty ?? true {
            stored[key] = .string(randomHex(bytes: length))
            changed = true
        }
        if changed {
            var writer = JSONWriter(sortsKeys: true)
            writer.object(stored)
            writer.newline()
            // The file holds secrets: owner only, from its first byte.
            try AtomicFile.write(writer.bytes, to: file, mode: 0o600)
        }
        return CollectorCredentials(
            writeKey: writeKey ?? stored["writeKey"]?.stringValue ?? "",
            adminToken: adminToken ?? stored["adminToken"]?.stringValue ?? "",
            suppressionKey: suppressionKey ?? stored["suppressionKey"]?.stringValue ?? "")
    }

    /// The fewest characters a write key or the admin token may have: 16 (the generated ones have 32
    /// and 48), so neither can be guessed by trying.
    public static let minimumLength = 16

    /// Checks that a key or token is long enough and holds printable ASCII only.
    /// - Parameters:
    ///   - value: the key or token.
    ///   - name: what it is and where it came from, for the error (`write key of source "web"`).
    /// - Throws: ``CollectorError`` ``CollectorError/Code/invalidConfiguration`` naming it.
    static func check(_ value: String, _ name: String) throws {
        guard value.count >= minimumLength else {
            let length = value.isEmpty ? "is empty" : "has \(value.count) characters"
            throw CollectorError(
                .invalidConfiguration,
                "\(name) \(length); it needs at least \(minimumLength) (leave it unset to have one generated)")
        }
        guard value.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw CollectorError(
                .invalidConfiguration, "\(name) may hold printable ASCII only (no spaces or control characters)")
        }
    }

    /// Whether the file or directory at `path` can be read or entered by accounts other than its owner.
    static func isOpenToOthers(_ path: String) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = attributes[.posixPermissions] as? Int
        else { return false }
        return mode & 0o077 != 0
    }

    /// `bytes` random bytes from the system's secure generator, as lowercase hex.
    static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
        }.joined()
    }
}
