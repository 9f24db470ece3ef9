import Foundation
import Testing
import TouchpointCollector
import TouchpointTesting

/// `touchpoint users delete`, run as an operator runs it, against a running collector.
struct UsersCommandTests {
    @Test func deletesAUsersEventsThroughTheAPI() async throws {
        let files = try TemporaryDirectory(prefix: "users-command")
        let collector = try await CollectorServer(
            configuration: CollectorConfiguration(port: 0, dataDirectory: files.appending("data"))
        ).start()
        do {
            let outcome = try await collector.services.ingest.ingest(
                Array(
                    #"{"batch":[{"type":"track","event":"a","messageId":"m1","userId":"u-42","anonymousId":"x"},{"type":"track","event":"b","messageId":"m2","userId":"u-7","anonymousId":"y"}]}"#
                        .utf8), endpoint: .batch, source: "default")
            #expect(outcome.accepted == 2)
            let result = try await ChildProcess.run(
                ChildProcess.builtProduct("touchpoint"),
                [
                    "users", "delete", "--collector", collector.baseURL.absoluteString, "--admin-token",
                    collector.adminToken, "--user-id", "u-42", "--suppress",
                ],
                // The command's own wait (300 s) decides; on a busy machine a deletion may take more than 30 s.
                timeout: 330)
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output.contains(#""events":1"#), "\(result.output)")
            #expect(try await collector.services.query.counts(source: "default").events == 1)

            let refused = try await ChildProcess.run(
                ChildProcess.builtProduct("touchpoint"),
                [
                    "users", "delete", "--collector", collector.baseURL.absoluteString, "--admin-token",
                    "wrong-token-0000000",
                ],
                timeout: 60)
            #expect(refused.status != 0)
            #expect(refused.errors.contains("name at least one --user-id or --anonymous-id"), "\(refused.errors)")

            let impatient = try await ChildProcess.run(
                ChildProcess.builtProduct("touchpoint"),
                [
                    "users", "delete", "--collector", collector.baseURL.absoluteString, "--admin-token",
                    collector.adminToken, "--user-id", "u-7", "--timeout", "0",
                ],
                timeout: 60)
            #expect(impatient.status != 0)
            #expect(impatient.errors.contains("--timeout must be a positive number of seconds"), "\(impatient.errors)")
            #expect(try await collector.services.query.counts(source: "default").events == 1)
        } catch {
            try? await collector.shutdown()
            throw error
        }
        try await collector.shutdown()
    }
}
