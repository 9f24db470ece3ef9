import Foundation
import Testing
import TouchpointCollector
import TouchpointTesting

/// `touchpoint backup` and `touchpoint restore`, run as an operator runs them, against a running
/// collector's data directory.
struct BackupCommandTests {
    @Test func backupWhileServingThenRestoreIntoANewDirectory() async throws {
        let files = try TemporaryDirectory(prefix: "backup-command")
        let data = files.appending("data")
        let configuration = CollectorConfiguration(port: 0, dataDirectory: data)
        let collector = try await CollectorServer(configuration: configuration).start()
        let outcome = try await collector.services.ingest.ingest(
            Array(
                #"{"batch":[{"type":"track","event":"a","messageId":"m1","anonymousId":"x"},{"type":"track","event":"b","messageId":"m2","anonymousId":"x"}]}"#
                    .utf8), endpoint: .batch, source: "default")
        #expect(outcome.accepted == 2)
        let tool = ChildProcess.builtProduct("touchpoint")
        let file = files.appending("b.sqlite").path
        let backup = try await ChildProcess.run(tool, ["backup", "--data", data.path, "--to", file], timeout: 60)
        try await collector.shutdown()
        #expect(backup.status == 0, "\(backup.errors)")
        #expect(backup.output.hasPrefix("backed up 2 events (schema "), "\(backup.output)")

        let again = try await ChildProcess.run(tool, ["backup", "--data", data.path, "--to", file], timeout: 60)
        #expect(again.status != 0)
        #expect(again.errors.contains("exists; a backup never overwrites a file"), "\(again.errors)")

        let restored = files.appending("restored").path
        let restore = try await ChildProcess.run(tool, ["restore", "--from", file, "--data", restored], timeout: 60)
        #expect(restore.status == 0, "\(restore.errors)")
        #expect(restore.output.hasPrefix("restored 2 events"), "\(restore.output)")
    }
}
