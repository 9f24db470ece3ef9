import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// `touchpoint backup` and `restore` (``CollectorBackup``) against a real collector's SQLite
/// database, while it stores events.
@Suite(.serialized)
struct BackupTests {
    @Test func aBackupTakenDuringIngestHoldsEverythingAcknowledgedBeforeIt() async throws {
        let files = try TemporaryDirectory(prefix: "backup-files")
        let backupFile = files.appending("backup.sqlite")
        let data = files.appending("data")
        let acknowledged = Locked(0)
        let window = try await CollectorUnderTest.run(data: data) { collector in
            let stop = Locked(false)
            let load = Task {
                var round = 0
                while !stop.value {
                    let batch = TestMessages.batch(
                        (0..<50).map { TestMessages.track("load", id: "r\(round)-\($0)", session: "s\(round % 7)") })
                    let outcome = try await collector.services.ingest.ingest(batch, endpoint: .batch, source: "default")
                    acknowledged.withLock { $0 += outcome.accepted }
                    round += 1
                }
            }
            // A long wait allowed: with the whole suite running on two shared cores, 2,000 events
            // once took longer than `eventually`'s 30 s.
            #expect(await eventually(timeout: .seconds(300)) { acknowledged.value >= 2_000 })
            let before = acknowledged.value
            let summary = try await Task.detached {
                try CollectorBackup.backup(dataDirectory: data, to: backupFile)
            }.value
            stop.withLock { $0 = true }
            try await load.value
            // Everything the copy holds was acknowledged by the time the load stopped (a batch
            // committed during the backup may be counted only after it).
            let after = acknowledged.value
            #expect(summary.schemaVersion == SchemaMigrations.latestVersion)
            return (before, after, summary.events)
        }
        let (before, after, copied) = window
        #expect(copied >= before, "the backup lost acknowledged events")
        #expect(copied <= after)
        #expect(try HardeningTests.mode(backupFile.path) == 0o600)

        // Restored into a new directory, a collector serves exactly the copy.
        let restored = files.appending("restored")
        let summary = try CollectorBackup.restore(from: backupFile, into: restored, replace: false)
        #expect(summary.events == copied)
        let served = try await CollectorUnderTest.run(data: restored) { collector in
            try await collector.services.query.counts(source: "default").events
        }
        #expect(served == copied)
    }

    @Test func backupAndRestoreRefuseWhatWouldLoseData() async throws {
        let files = try TemporaryDirectory(prefix: "backup-refusals")
        let data = files.appending("data")
        let stored = try await CollectorUnderTest.run(data: data) { collector in
            try await collector.services.ingest.ingest(
                TestMessages.batch([TestMessages.track("e", id: "one")]), endpoint: .batch, source: "default"
            ).accepted
        }
        #expect(stored == 1)
        let file = files.appending("b.sqlite")
        try CollectorBackup.backup(dataDirectory: data, to: file)
        // Never overwrites a file.
        #expect {
            try CollectorBackup.backup(dataDirectory: data, to: file)
        } throws: { ($0 as? CollectorError)?.message.contains("exists; a backup never overwrites a file") == true }
        // Nothing to back up.
        #expect {
            try CollectorBackup.backup(dataDirectory: files.appending("empty"), to: files.appending("x.sqlite"))
        } throws: { ($0 as? CollectorError)?.message.contains("no collector database to back up") == true }
        // Not a backup.
        let text = files.appending("notes.txt")
        try Data("not a database".utf8).write(to: text)
        #expect {
            try CollectorBackup.restore(from: text, into: files.appending("r"), replace: false)
        } throws: { ($0 as? CollectorError)?.message.contains("is not a collector backup") == true }
        // A data directory that holds a database: only with replace.
        #expect {
            try CollectorBackup.restore(from: file, into: data, replace: false)
        } throws: { ($0 as? CollectorError)?.message.contains("pass --replace") == true }
        // The filter saved for the database replaced goes with it.
        let filter = data.appendingPathComponent(
            CollectorConfiguration.sqliteFileName + MessageKeyIndex.filterFileSuffix)
        try Data("a saved filter".utf8).write(to: filter)
        #expect(try CollectorBackup.restore(from: file, into: data, replace: true).events == 1)
        #expect(!FileManager.default.fileExists(atPath: filter.path))
    }
}
