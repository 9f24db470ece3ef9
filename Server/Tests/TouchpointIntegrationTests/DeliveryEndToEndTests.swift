import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointDelivery
import TouchpointEvents
import TouchpointTesting

/// The SDK's recorder and dispatcher against the real collector: what the app recorded is what
/// the collector's query API returns, once each, in order, through a collector restart.
struct DeliveryEndToEndTests {
    /// A recorder over a fresh directory whose clock moves one second per event, so the
    /// collector's skew-corrected timestamps keep recording order whatever the request latency.
    struct App {
        let directory: TemporaryDirectory
        let clock: ManualClock
        let recorder: EventRecorder

        init() throws {
            directory = try TemporaryDirectory(prefix: "integration-app")
            clock = ManualClock(start: Date().addingTimeInterval(-86_400))
            var configuration = EventRecorderConfiguration()
            configuration.clock = clock
            configuration.retention = .keepEverything
            configuration.logger.logLevel = .warning
            recorder = EventRecorder(directory: directory.url, configuration: configuration)
        }

        /// Records `count` events (durably, so off the cooperative pool).
        func record(_ count: Int, name: String = "tap", from start: Int = 0, step: TimeInterval = 1) async throws
            -> [Event]
        {
            let recorder = self.recorder
            let clock = self.clock
            return try await onOwnThread {
                try (start..<(start + count)).map { index in
                    clock.advance(by: step)
                    guard let event = recorder.record(name, properties: ["index": .int(index)]) else {
                        throw TestFailure("the recorder refused event \(index)")
                    }
                    return event
                }
            }
        }

        /// A dispatcher that sends only on `dispatch()`, in batches of 16, retrying fast.
        /// A dispatcher to `collector` whose requests give up after `requestTimeout` seconds (a
        /// request given up is sent again, which the collector counts as deduplicated).
        func dispatcher(to collector: LiveCollector, requestTimeout: TimeInterval = 10) -> EventDispatcher {
            var configuration = DeliveryConfiguration()
            configuration.dispatchInterval = -1
            configuration.batchLimits = BatchLimits(maximumEvents: 16)
            configuration.backoff = Backoff.Policy(
                initialDelay: 0.05, multiplier: 2, maximumDelay: 0.4, minimumDelay: 0.02, maximumRetryAfter: 5)
            configuration.requestTimeout = requestTimeout
            configuration.maximumRequestsPerMinute = nil
            configuration.reachability = nil
            configuration.jitterSeed = 1
            configuration.logger.logLevel = .critical
            return EventDispatcher(
                writeKey: collector.writeKey, endpoint: collector.baseURL, recorder: recorder,
                configuration: configuration)
        }
    }

    /// Checks through the query API that the collector stores exactly `expected`: each event once,
    /// every session's events in recording order, with their session, user and name.
    static func expectStored(
        _ expected: [Event], in collector: LiveCollector, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let counts = try await collector.query("/v1/query/counts")
        #expect(counts["events"]?.intValue == expected.count, sourceLocation: sourceLocation)

        let all = try await collector.queryAll("/v1/query/events")
        let storedIDs = all.compactMap { $0["messageId"]?.stringValue?.lowercased() }
        #expect(storedIDs.count == expected.count, "duplicates or losses", sourceLocation: sourceLocation)
        #expect(
            Set(storedIDs) == Set(expected.map { $0.messageId.lowercased() }), sourceLocation: sourceLocation)

        var sessions: [UUID] = []
        for event in expected where !sessions.contains(event.sessionId) { sessions.append(event.sessionId) }
        for session in sessions {
            let recorded = expected.filter { $0.sessionId == session }
            let stored = try await collector.queryAll("/v1/query/sessions/\(session.uuidString)/events")
            #expect(
                stored.compactMap { $0["messageId"]?.stringValue?.lowercased() }
                    == recorded.map { $0.messageId.lowercased() },
                "session \(session): order", sourceLocation: sourceLocation)
            for (event, item) in zip(recorded, stored) {
                #expect(item["sessionId"]?.stringValue?.lowercased() == session.uuidString.lowercased())
                #expect(item["userId"]?.stringValue == event.userId, sourceLocation: sourceLocation)
                #expect(item["anonymousId"]?.stringValue == event.anonymousId, sourceLocation: sourceLocation)
                #expect(item["event"]?.stringValue == event.name, sourceLocation: sourceLocation)
                if case .int(let index)? = event.properties["index"] {
                    #expect(item["properties"]?["index"]?.intValue == index, sourceLocation: sourceLocation)
                } else {
                    Issue.record("event \(event.messageId) has no index", sourceLocation: sourceLocation)
                }
            }
        }
        // Sessions by user: each user's sessions and nobody else's.
        for user in Set(expected.compactMap(\.userId)) {
            let listed = try await collector.queryAll("/v1/query/sessions?userId=\(LiveCollector.queryEncoded(user))")
            let expectedSessions = Set(
                expected.filter { $0.userId == user }.map { $0.sessionId.uuidString.lowercased() })
            #expect(
                Set(listed.compactMap { $0["sessionId"]?.stringValue?.lowercased() }) == expectedSessions,
                "sessions of \(user)", sourceLocation: sourceLocation)
        }
    }

    @Test func everyRecordedEventIsStoredOnceInOrderWithItsSessionAndUser() async throws {
        let collector = try await LiveCollector.start()
        let app = try App()
        // Nothing is sent twice unless a request is given up: under a full test suite's load an
        // answer can take more than 10 s, so this one waits as long as the dispatch may.
        let dispatcher = app.dispatcher(to: collector, requestTimeout: 300)

        _ = await app.recorder.startSession(userID: "alice")
        var expected = try await app.record(40, name: "browse")
        _ = await app.recorder.startSession(userID: "bob")
        expected += try await app.record(40, name: "checkout", from: 40)
        _ = await app.recorder.startSession()
        expected += try await app.record(20, name: "anonymous", from: 80)

        let report = try await dispatcher.dispatch(timeout: 300)
        #expect(report == DispatchReport(deliveredEvents: 100, droppedEvents: 0))
        try await Self.expectStored(expected, in: collector)
        #expect(try await collector.metric("touchpoint_events_deduplicated_total") == 0)

        await dispatcher.shutdown()
        try await collector.stop()
    }

    /// The delivery issue's proof at full size: 100,000 events across 10 sessions of 4 users and
    /// an anonymous one, delivered in default-size batches (up to 500 KB each).
    @Test func aHundredThousandEventsAcrossSessionsAndUsersArriveOnceInOrder() async throws {
        let collector = try await LiveCollector.start()
        let app = try App()
        var configuration = DeliveryConfiguration()
        configuration.dispatchInterval = -1
        configuration.maximumRequestsPerMinute = nil
        configuration.reachability = nil
        configuration.logger.logLevel = .critical
        let dispatcher = EventDispatcher(
            writeKey: collector.writeKey, endpoint: collector.baseURL, recorder: app.recorder,
            configuration: configuration)

        var expected: [Event] = []
        for session in 0..<10 {
            _ = await app.recorder.startSession(userID: session == 9 ? nil : "user-\(session % 4)")
            // 5 ms apart: distinct millisecond timestamps, all in the past.
            expected += try await app.record(10_000, name: "screen_view", from: session * 10_000, step: 0.005)
        }
        let report = try await dispatcher.dispatch(timeout: 900)
        #expect(report == DispatchReport(deliveredEvents: 100_000, droppedEvents: 0))
        try await Self.expectStored(expected, in: collector)
        #expect(try await collector.metric("touchpoint_events_deduplicated_total") == 0)

        await dispatcher.shutdown()
        try await collector.stop()
    }

    @Test func aCollectorRestartMidWayLosesNothingAndDuplicatesNothing() async throws {
        let collector = try await LiveCollector.start()
        let app = try App()
        let dispatcher = app.dispatcher(to: collector)

        _ = await app.recorder.startSession(userID: "alice")
        var expected = try await app.record(30)
        #expect(try await dispatcher.dispatch(timeout: 300).deliveredEvents == 30)
        expected += try await app.record(10, from: 30)

        // The collector goes away with 10 events pending; the app keeps recording, in the same
        // session and in a new one.
        try await collector.stop()
        expected += try await app.record(20, from: 40)
        _ = await app.recorder.startSession(userID: "bob")
        expected += try await app.record(20, from: 60)
        do {
            _ = try await dispatcher.dispatch(timeout: 30, failFast: true)
            Issue.record("a dispatch to a stopped collector succeeded")
        } catch let error as DeliveryError {
            #expect(error.code == .collectorUnavailable, "\(error)")
        }

        // Back on the same port and data directory: the rest arrives, and nothing twice.
        try await collector.restart()
        let report = try await dispatcher.dispatch(timeout: 300)
        #expect(report.deliveredEvents == 50)
        try await Self.expectStored(expected, in: collector)
        #expect(try await collector.metric("touchpoint_events_deduplicated_total") == 0)

        // A second dispatcher for the same destination (the app relaunched) resumes at the
        // persisted cursor: nothing is pending, nothing is sent again.
        await dispatcher.shutdown()
        let relaunched = app.dispatcher(to: collector)
        #expect(try await relaunched.dispatch(timeout: 300) == DispatchReport())
        try await Self.expectStored(expected, in: collector)
        await relaunched.shutdown()
        try await collector.stop()
    }
}
