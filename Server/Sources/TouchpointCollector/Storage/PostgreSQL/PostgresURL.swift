import Foundation
import NIOSSL
import PostgresNIO

/// A `postgres://user:password@host:port/database?sslmode=…` URL, read into a client configuration.
struct PostgresURL {
    let host: String
    let port: Int
    let username: String
    let password: String?
    let database: String?
    let sslMode: String

    /// Reads `text`.
    /// - Throws: ``StorageError`` with code `invalidDatabaseURL`, naming what is wrong.
    init(_ text: String) throws {
        let (components, host) = try DatabaseURL.components(
            text, schemes: ["postgres", "postgresql"], expected: "postgres://user@host:port/database")
        self.host = host
        port = components.port ?? 5432
        username = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        password = components.password.flatMap { $0.removingPercentEncoding }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? nil : path.removingPercentEncoding
        sslMode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
        guard ["disable", "prefer", "require", "allow"].contains(sslMode) else {
            throw StorageError(
                code: .invalidDatabaseURL,
                message: "\(Self.redacted(text)): sslmode \(sslMode) is not one of disable, allow, prefer, require")
        }
    }

    func clientConfiguration() -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        switch sslMode {
        case "disable", "allow": tls = .disable
        case "require": tls = .require(.makeClientConfiguration())
        default: tls = .prefer(.makeClientConfiguration())
        }
        return PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
    }

    /// `text` with any password replaced by `***`, for logs and errors.
    static func redacted(_ text: String) -> String { DatabaseURL.redacted(text) }
}
