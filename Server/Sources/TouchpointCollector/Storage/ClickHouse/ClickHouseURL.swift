import Foundation

/// Where ClickHouse's HTTP interface is: `clickhouse://user:password@host:8123/database`, or the
/// same with `http://` or `https://` (`clickhouse://…?secure=true` is HTTPS too). The port defaults
/// to 8123 (8443 for HTTPS), the user to `default`, the database to `default`.
struct ClickHouseURL: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`.
    let scheme: String
    let host: String
    let port: Int
    let username: String
    let password: String?
    private(set) var database: String

    /// Reads `text`.
    /// - Throws: ``StorageError`` with code `invalidDatabaseURL`, naming what is wrong.
    init(_ text: String) throws {
        let (components, host) = try DatabaseURL.components(
            text, schemes: ["clickhouse", "http", "https"],
            expected: "clickhouse://host:8123/database (or http:// or https://)")
        let given = components.scheme?.lowercased()
        let secure = components.queryItems?.first { $0.name == "secure" }?.value
        guard secure == nil || ["true", "false", "1", "0"].contains(secure!) else {
            throw StorageError(
                code: .invalidDatabaseURL,
                message: "\(Self.redacted(text)): secure=\(secure!) is not one of true, false, 1, 0")
        }
        let https = given == "https" || secure == "true" || secure == "1"
        scheme = https ? "https" : "http"
        self.host = host
        port = components.port ?? (https ? 8443 : 8123)
        username = components.user.flatMap { $0.removingPercentEncoding } ?? "default"
        password = components.password.flatMap { $0.removingPercentEncoding }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let name = path.removingPercentEncoding ?? path
        database = name.isEmpty ? "default" : name
        guard Self.isIdentifier(database) else {
            throw StorageError(
                code: .invalidDatabaseURL,
                message: "\(Self.redacted(text)): database \(database) is not a name of letters, digits and _")
        }
    }

    /// The same server with another database.
    func with(database: String) -> ClickHouseURL {
        var copy = self
        copy.database = database
        return copy
    }

    /// `http://host:port`, where requests go.
    var endpoint: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(bracketed):\(port)"
    }

    /// The endpoint and database, never the password.
    var description: String { "\(endpoint)/\(database)" }

    /// Whether `name` is a plain identifier (letters, digits, `_`, not starting with a digit), which
    /// needs no quoting in ClickHouse's SQL.
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
    }

    /// `text` with any password replaced by `***`, for logs and errors.
    static func redacted(_ text: String) -> String { DatabaseURL.redacted(text) }
}
