import Foundation
import TouchpointCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Backups of a SQLite collector's database, taken while it runs, and putting one back.
///
/// ```sh
/// touchpoint backup --data ./touchpoint-data --to backup-2026-11-25.sqlite   # while serving
/// touchpoint restore --from backup-2026-11-25.sqlite --data ./touchpoint-data --replace   # stopped
/// ```
///
/// A backup is SQLite's online backup API in one step: one read transaction, so the copy is the
/// database as it was at one moment — every event acknowledged before the backup began is in it
/// — and the running collector's writes are not held up (WAL). The file is created owner-only
/// (0600) and never overwrites one that exists. For PostgreSQL use its own tools (`pg_dump`,
/// `pg_basebackup`); see the README.
public enum CollectorBackup {
    /// What a backup or a restore copied.
    public struct Summary: Sendable, Equatable {
        /// Events in the copy.
        public var events: Int
        /// The schema version of the copy.
        public var schemaVersion: Int
        /// The copy's size in bytes.
        public var bytes: Int
    }

    /// Copies the database of `dataDirectory` into `file`, which must not exist.
    /// - Throws: ``CollectorError`` (`invalid_configuration`) naming the file or directory at fault.
    @discardableResult
    public static func backup(dataDirectory: URL, to file: URL) throws -> Summary {
        let source = dataDirectory.appendingPathComponent(CollectorConfiguration.sqliteFileName).path
        guard FileManager.default.fileExists(atPath: source) else {
            throw CollectorError(.invalidConfiguration, "\(source): no collector database to back up (--data)")
        }
        try createExclusively(file.path)
        do {
            let from = try SQLiteConnection.open(path: source)
            defer { try? from.close() }
            try from.execute("PRAGMA busy_timeout = 10000")
            let into = try SQLiteConnection.open(path: file.path)
            defer { try? into.close() }
            try from.backup(into: into)
            // A copy in one file: no WAL beside it.
            try into.execute("PRAGMA journal_mode = DELETE")
            return try summary(into, path: file.path)
        } catch {
            try? FileManager.default.removeItem(atPath: file.path)
            throw CollectorError(.invalidConfiguration, "backing up \(source) to \(file.path) failed: \(error)")
        }
    }

    /// Puts the backup `file` back as the database of `dataDirectory` (the collector stopped).
    /// - Parameter replace: whether to replace a database the directory already holds.
    /// - Throws: ``CollectorError`` naming the file that is not a collector backup, a schema newer
    ///   than this collector's, or a database that exists without `replace`.
    @discardableResult
    public static func restore(from file: URL, into dataDirectory: URL, replace: Bool) throws -> Summary {
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw CollectorError(.invalidConfiguration, "\(file.path): no such backup (--from)")
        }
        let from: SQLiteConnection
        let found: Summary
        do {
            from = try SQLiteConnection.open(path: file.path)
            found = try summary(from, path: file.path)
        } catch {
            throw CollectorError(.invalidConfiguration, "\(file.path) is not a collector backup: \(error)")
        }
        defer { try? from.close() }
        guard found.schemaVersion <= SchemaMigrations.latestVersion else {
            throw CollectorError(
                .invalidConfiguration,
                "\(file.path) has schema version \(found.schemaVersion); this collector knows up to \(SchemaMigrations.latestVersion)"
            )
        }
        try AtomicFile.createDirectory(dataDirectory.path, mode: 0o700)
        let target = dataDirectory.appendingPathComponent(CollectorConfiguration.sqliteFileName).path
        if FileManager.default.fileExists(atPath: target), !replace {
            throw CollectorError(
                .invalidConfiguration, "\(target) exists; stop the collector and pass --replace to overwrite it")
        }
        do {
            // A filter saved for the database replaced (the next start builds one for this).
            try AtomicFile.remove(target + MessageKeyIndex.filterFileSuffix)
            try createOwnerOnly(target)
            let into = try SQLiteConnection.open(path: target)
            defer { try? into.close() }
            try into.execute("PRAGMA busy_timeout = 10000")
            try from.backup(into: into)
            try into.execute("PRAGMA journal_mode = WAL")
            return try summary(into, path: target)
        } catch {
            throw CollectorError(.invalidConfiguration, "restoring \(file.path) into \(target) failed: \(error)")
        }
    }

    private static func summary(_ connection: SQLiteConnection, path: String) throws -> Summary {
        let version = try connection.execute("SELECT MAX(version) FROM schema_migrations").first?.first?.int ?? 0
        let events = try connection.execute("SELECT COUNT(*) FROM events").first?.first?.int ?? 0
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        let bytes = (attributes?[.size] as? Int) ?? 0
        return Summary(events: Int(events), schemaVersion: Int(version), bytes: bytes)
    }

    /// Creates `path` owner-only; fails when it exists, so no backup overwrites another file.
    private static func createExclusively(_ path: String) throws(CollectorError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason = errno == EEXIST ? "exists; a backup never overwrites a file" : String(cString: strerror(errno))
            throw CollectorError(.invalidConfiguration, "\(path) \(reason) (--to)")
        }
        _ = close(descriptor)
    }
}
