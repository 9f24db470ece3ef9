import ArgumentParser
import Foundation
import TouchpointCollector

/// `touchpoint backup`: a consistent copy of a SQLite collector's database, while it runs.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a SQLite collector's database into a file, while the collector runs.",
        discussion: """
            The copy is the database as it was at one moment (SQLite's online backup API): every \
            event acknowledged before the backup began is in it. The file is created owner-only and \
            never overwrites one. For PostgreSQL, use pg_dump or pg_basebackup.
            """)

    @Option(help: "The collector's data directory (default ./touchpoint-data).")
    var data: String = "touchpoint-data"

    @Option(help: "The backup file to create; it must not exist.")
    var to: String

    func run() throws {
        let summary = try CollectorBackup.backup(
            dataDirectory: URL(fileURLWithPath: data, isDirectory: true), to: URL(fileURLWithPath: to))
        print("backed up \(summary.events) events (schema \(summary.schemaVersion), \(summary.bytes) bytes) to \(to)")
    }
}

/// `touchpoint restore`: puts a backup back as a collector's database.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put a backup back as a SQLite collector's database (stop the collector first).",
        discussion: """
            Refuses a file that is not a collector backup, a backup from a newer collector, and a data \
            directory that already holds a database unless --replace is given.
            """)

    @Option(help: "The backup file.")
    var from: String

    @Option(help: "The collector's data directory (default ./touchpoint-data).")
    var data: String = "touchpoint-data"

    @Flag(help: "Replace the database the data directory holds.")
    var replace = false

    func run() throws {
        let summary = try CollectorBackup.restore(
            from: URL(fileURLWithPath: from), into: URL(fileURLWithPath: data, isDirectory: true), replace: replace)
        print("restored \(summary.events) events (schema \(summary.schemaVersion)) into \(data)")
    }
}
