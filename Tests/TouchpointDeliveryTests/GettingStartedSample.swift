// The "Getting started with delivery" article's samples, as written; the test runs the last one
// against a collector double on 127.0.0.1.
import Foundation
import Testing
import TouchpointDelivery
import TouchpointEvents
import TouchpointTesting

/// Compiled, never called: it would deliver the app's shared log to example.com.
private func startSample() async throws {
    EventDispatcher.start(writeKey: "wk_live_…", endpoint: URL(string: "https://collector.example.com")!)
    EventRecorder.shared.record("checkout_started", properties: ["items": .int(3)])

    let report = try await EventDispatcher.dispatch(timeout: 30)
    print(report.deliveredEvents, report.droppedEvents)

    EventDispatcher.setDebugMode(true)
}

struct GettingStartedSampleTests {
    @Test func theTestSampleRuns() async throws {
        let directory = try TemporaryDirectory()
        let collector = TestCollector(writeKey: "wk")
        let server = try TestHTTPServer(handler: collector.handle)
        let recorder = EventRecorder(directory: directory.url)
        let dispatcher = EventDispatcher(writeKey: "wk", endpoint: server.baseURL, recorder: recorder)
        recorder.record("checkout_started")
        let report = try await dispatcher.dispatch(timeout: 30)
        #expect(report.deliveredEvents == 1)
        #expect(collector.storedCount == 1)
        await dispatcher.shutdown()
    }
}
