// The TouchpointTesting "Getting started" article's samples, as written; the test runs them.
import Foundation
import Testing
import Touchpoint
import TouchpointTesting

struct TestingGettingStartedSampleTests {
    @Test func aCollectorBehindAFaultIsDeliveredToOnce() async throws {
        let directory = try TemporaryDirectory()
        let recorder = EventRecorder(directory: directory.url)

        let collector = TestCollector(writeKey: "wk")
        let upstream = try TestHTTPServer(handler: collector.handle)
        let faults = try FaultInjectingServer(
            plan: FaultPlan(sequence: [.status(503, retryAfter: "0")]), upstream: upstream.baseURL)
        let dispatcher = EventDispatcher(writeKey: "wk", endpoint: faults.baseURL, recorder: recorder)
        recorder.record("checkout_started")
        let report = try await dispatcher.dispatch(timeout: 30)  // a 503, then delivered
        #expect(report.deliveredEvents == 1)
        #expect(collector.storedCount == 1)
        #expect(faults.statistics.totalInjected == 1)
        await dispatcher.shutdown()
    }
}
