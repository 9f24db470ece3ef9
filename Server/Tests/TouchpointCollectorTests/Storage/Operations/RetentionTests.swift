import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Retention deletes exactly what is older than each source's limit, events and sessions, on both
/// databases, while ingest goes on.
struct RetentionTests {
    static let day: TimeInterval = 86_400

    @Test(arguments: StorageKind.available)
    func deletesExactlyWhatIsOlderThanEachSourcesLimit(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            // "Now" is 50 days after the test messages' base time.
            let clock = ManualClock(start: TestMessages.base.addingTimeInterval(50 * Self.day))
            for source in ["default", "web"] {
                var messages: [IngestMessage] = []
                for index in 0..<25 {  // 40 days old, in five old sessions
                    messages.append(
                        TestMessages.ingest(
                            "old", id: "\(source)-old-\(index)", session: "old-\(index % 5)",
                            at: 10 * Self.day + Double(index)))
                }
                for index in 0..<10 {  // a day old
                    messages.append(
                        TestMessages.ingest(
                            "new", id: "\(source)-new-\(index)", session: "new", at: 49 * Self.day + Double(index)))
                }
                #expect(try await storage.insert(messages, source: source).allSatisfy { $0 })
            }
            let retention = RetentionService(
                storage: storage,
                sources: [
                    CollectorSource(id: "default", writeKey: "k1"),
                    CollectorSource(id: "web", writeKey: "k2", retentionDays: 60),
                ],
                defaultDays: 30, clock: clock, logger: Logger(label: "test"), batchSize: 7)
            #expect(retention.days == ["default": 30, "web": 60])

            // Ingest goes on during the pass: recent events, all kept.
            let ingest = Task {
                var stored = 0
                for round in 0..<20 {
                    let batch = (0..<5).map {
                        TestMessages.ingest("live", id: "live-\(round)-\($0)", session: "live", at: 50 * Self.day)
                    }
                    stored += try await storage.insert(batch, source: "default").filter { $0 }.count
                }
                return stored
            }
            let report = try await retention.runPass()
            let live = try await ingest.value
            #expect(report == RetentionService.Report(events: 25, sessions: 5))

            let kept = try await storage.counts(source: "default")
            #expect(kept.events == 10 + live)
            #expect(kept.sessions == 2)  // "new" and "live"
            let names = try await storage.backend.query(
                "SELECT DISTINCT event FROM events WHERE source = 'default' ORDER BY event", [])
            #expect(names.compactMap { $0.first?.text } == ["live", "new"])
            // The other source keeps 60 days: nothing of it was old enough.
            let web = try await storage.counts(source: "web")
            #expect(web.events == 35)
            #expect(web.sessions == 6)
            // A second pass finds nothing more.
            #expect(try await retention.runPass() == RetentionService.Report())
        }
    }

    @Test func aRetentionBelowOneDayIsRefusedAtStart() async throws {
        let directory = try TemporaryDirectory(prefix: "retention-bad")
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.url)
        configuration.logger.logLevel = .critical
        configuration.retentionDays = 0
        await #expect {
            _ = try await CollectorServer(configuration: configuration).start()
        } throws: { error in
            (error as? CollectorError)?.message == "--retention-days: 0 is not a number of days above zero"
        }
    }
}
