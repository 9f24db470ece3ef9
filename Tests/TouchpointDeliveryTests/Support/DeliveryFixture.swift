import Foundation
import InMemoryLogging
import Logging
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

@testable import TouchpointDelivery

/// A recorder over a fresh directory, a Segment-style collector on 127.0.0.1, and dispatchers
/// configured for fast tests (short backoff, no rate limit, no reachability, seeded jitter).
struct DeliveryFixture {
    static let writeKey = "wk_test"

    let directory: TemporaryDirectory
    let clock: (any WallClock)?
    let recorder: EventRecorder
    let collector: TestCollector
    let server: TestHTTPServer
    let logs = InMemoryLogHandler()

    /// - Parameters:
    ///   - clock: a manual clock for the recorder and dispatchers, or nil for the system clock.
    ///   - collector: the collector to serve (a fresh one by default).
    ///   - handler: answers instead of the collector (it can pass requests on to `collector.handle`).
    ///   - retention: the recorder's retention policy.
    init(
        clock: (any WallClock)? = nil,
        collector: TestCollector = TestCollector(writeKey: DeliveryFixture.writeKey),
        handler: TestHTTPServer.Handler? = nil,
        retention: RetentionPolicy = .keepEverything
    ) throws {
        directory = try TemporaryDirectory(prefix: "delivery")
        self.clock = clock
        var configuration = EventRecorderConfiguration()
        if let clock { configuration.clock = clock }
        configuration.retention = retention
        recorder = EventRecorder(directory: directory.url, configuration: configuration)
        self.collector = collector
        server = try TestHTTPServer(handler: handler ?? collector.handle)
    }

    /// A configuration for tests: backoff from 50 ms capped at 400 ms, 5 s request timeout.
    func configuration(interval: TimeInterval = 0) -> DeliveryConfiguration {
        var configuration = DeliveryConfiguration()
        configuration.dispatchInterval = interval
        configuration.backoff = Backoff.Policy(
            initialDelay: 0.05, multiplier: 2, maximumDelay: 0.4, minimumDelay: 0.02, maximumRetryAfter: 5)
        configuration.requestTimeout = 5
        configuration.maximumRequestsPerMinute = nil
        configuration.reachability = nil
        configuration.jitterSeed = 1
        if let clock { configuration.clock = clock }
        let handler = logs
        configuration.logger = Logger(label: "touchpoint.delivery") { _ in handler }
        return configuration
    }

    /// A dispatcher delivering `recorder`'s log to the fixture's server.
    func dispatcher(
        _ configuration: DeliveryConfiguration? = nil, writeKey: String = DeliveryFixture.writeKey,
        recorder: EventRecorder? = nil
    ) -> EventDispatcher {
        EventDispatcher(
            writeKey: writeKey, endpoint: server.baseURL, recorder: recorder ?? self.recorder,
            configuration: configuration ?? self.configuration())
    }

    /// Pokes `dispatcher` and waits until its loop has decided to wait again after the poke:
    /// whatever it was going to send by then, it has sent.
    /// - Returns: why it waits, or nil when it did not settle within a minute.
    func settle(_ dispatcher: EventDispatcher) async -> DispatchStateMachine.WaitReason? {
        let poke = dispatcher.poke()
        guard await eventually(timeout: .seconds(60), { dispatcher.settled.afterPoke >= poke }) else { return nil }
        return dispatcher.settled.reason
    }

    /// Records `count` events named `name` with an `index` property, returning their ids.
    @discardableResult
    func record(_ count: Int, name: String = "tap", from start: Int = 0) -> [String] {
        (start..<(start + count)).compactMap { index in
            recorder.record(name, properties: ["index": .int(index)])?.messageId
        }
    }

    /// The messages of logged entries at `level`, as text.
    func logged(_ level: Logger.Level) -> [String] {
        logs.entries.filter { $0.level == level }.map { "\($0.message)" }
    }
}
