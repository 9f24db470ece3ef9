import Foundation

/// What the URLs of the databases (`postgres://…`, `clickhouse://…`) share: the scheme and host
/// checked, the password kept out of errors and logs.
enum DatabaseURL {
    /// `text`'s parts, when its scheme is one of `schemes` and it names a host.
    /// - Parameter expected: the form to name when it is not (`postgres://user@host:port/database`).
    /// - Throws: ``StorageError`` with code `invalidDatabaseURL`, naming what is wrong.
    static func components(_ text: String, schemes: Set<String>, expected: String) throws -> (
        URLComponents, host: String
    ) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            schemes.contains(scheme)
        else {
            throw StorageError(code: .invalidDatabaseURL, message: "\(redacted(text)): expected \(expected)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw StorageError(code: .invalidDatabaseURL, message: "\(redacted(text)): no host")
        }
        return (components, host)
    }

    /// `text` with any password replaced by `***`, for logs and errors.
    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? "(a URL with a password)"
    }
}
