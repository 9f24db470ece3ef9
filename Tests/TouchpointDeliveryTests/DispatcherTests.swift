import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointDelivery
import TouchpointEvents
import TouchpointTesting

@testable import TouchpointDelivery

/// The dispatcher end to end over real sockets on 127.0.0.1, against a Segment-style collector.
struct DispatcherTests {
    @Test func recordedEventsAreDeliveredAsTheyComeInOrderWithAuthAndSentAt() async throws {
        let fixture = try DeliveryFixture()
        let dispatcher = fixture.dispatcher()
        await fixture.recorder.startSession(userID: "u1")
        var ids = fixture.record(10)
        await fixture.recorder.startSession(userID: "u2")
        ids += fixture.record(10, from: 10)
        #expect(await fixture.collector.waitUntilStored(20))
        let messages = fixture.collector.messages
        #expect(messages.map(\.messageId) == ids)
        #expect(messages.prefix(10).allSatisfy { $0.userId == "u1" })
        #expect(messages.suffix(10).allSatisfy { $0.userId == "u2" })
        for message in messages {
            let sentAt = try #require(message.sentAt.flatMap(Timestamp.parse))
            let timestamp = try #require(message.timestamp.flatMap(Timestamp.parse))
            #expect(sentAt >= timestamp)
        }
        #expect(fixture.collector.counters.refusedRequests == 0)
        #expect(fixture.collector.counters.duplicates == 0)
        #expect(await eventually { dispatcher.status.statistics.deliveredEvents == 20 })
        await dispatcher.shutdown()
    }

    /// A refused write key blames no batch: the events are kept and retried, and a dispatcher
    /// with the right key delivers them.
    @Test func aWrongWriteKeyKeepsTheEventsUntilTheKeyIsRight() async throws {
        let fixture = try DeliveryFixture()
        let dispatcher = fixture.dispatcher(writeKey: "wrong")
        let ids = fixture.record(3)
        await #expect {
            try await dispatcher.dispatch(timeout: 60, failFast: true)
        } throws: { error in
            guard let error = error as? DeliveryError, error.code == .collectorUnavailable else { return false }
            return error.reason.contains("401") && error.reason.contains("write key was refused")
        }
        #expect(dispatcher.status.statistics.droppedEvents == 0)
        #expect(fixture.collector.storedCount == 0)
        #expect(fixture.server.requestCount >= 1)
        await dispatcher.shutdown()

        let fixed = fixture.dispatcher()
        let report = try await fixed.dispatch(timeout: 60)
        #expect(report.deliveredEvents == 3)
        #expect(report.droppedEvents == 0)
        #expect(fixture.collector.messages.map(\.messageId) == ids)
        await fixed.shutdown()
    }

    @Test func dispatchReturnsOnceTheCollectorAcknowledgedWhatWasPending() async throws {
        let fixture = try DeliveryFixture()
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: -1))
        let ids = fixture.record(100)
        #expect(await fixture.settle(dispatcher) == .manual)
        #expect(fixture.server.requestCount == 0)  // manual: nothing without dispatch()
        let report = try await dispatcher.dispatch(timeout: 60)
        #expect(report.deliveredEvents == 100)
        #expect(fixture.collector.messages.map(\.messageId) == ids)
        // Nothing pending: returns at once, without a request.
        let requests = fixture.server.requestCount
        #expect(try await dispatcher.dispatch(timeout: 60) == DispatchReport())
        #expect(fixture.server.requestCount == requests)
        await dispatcher.shutdown()
    }

    @Test func concurrentDispatchCallsAllReturnAndOneUploadIsInFlightAtATime() async throws {
        let collector = TestCollector(writeKey: DeliveryFixture.writeKey)
        let concurrency = Locked((current: 0, highest: 0))
        let fixture = try DeliveryFixture(collector: collector) { request in
            concurrency.withLock {
                $0.current += 1; $0.highest = max($0.highest, $0.current)
            }
            try? await Task.sleep(nanoseconds: 5_000_000)
            defer { concurrency.withLock { $0.current -= 1 } }
            return await collector.handle(request)
        }
        var configuration = fixture.configuration(interval: -1)
        configuration.batchLimits = BatchLimits(maximumEvents: 10)
        let dispatcher = fixture.dispatcher(configuration)
        fixture.record(200)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { _ = try await dispatcher.dispatch(timeout: 60) } }
            try await group.waitForAll()
        }
        #expect(collector.storedCount == 200)
        #expect(collector.counters.requests == 20)
        #expect(concurrency.value.highest == 1)
        await dispatcher.shutdown()
    }

    @Test func aTaskCancelledBeforeDispatchIsNotKeptWaiting() async throws {
        let fixture = try DeliveryFixture()
        fixture.server.stop()  // nothing would ever be acknowledged
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: -1))
        fixture.record(1)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await dispatcher.dispatch(timeout: 60)
        }
        await #expect { try await task.value } throws: { error in
            (error as? DeliveryError)?.code == .cancelled
        }
        await dispatcher.shutdown()
    }

    @Test func dispatchFailsFastWhenTheCollectorIsDownAndDeliversOnceItIsBack() async throws {
        let fixture = try DeliveryFixture()
        fixture.server.stop()
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: -1))
        fixture.record(5)
        await #expect { try await dispatcher.dispatch(timeout: 60, failFast: true) } throws: { error in
            (error as? DeliveryError)?.code == .collectorUnavailable
        }
        #expect(dispatcher.backlog().bytes > 0)
        #expect(dispatcher.status.consecutiveFailures == 1)
        try fixture.server.restart()
        let report = try await dispatcher.dispatch(timeout: 60)
        #expect(report.deliveredEvents == 5)
        #expect(dispatcher.status.consecutiveFailures == 0)
        await dispatcher.shutdown()
    }

    @Test func dispatchTimesOutWhileTheCollectorKeepsFailing() async throws {
        let fixture = try DeliveryFixture(handler: { _ in .text("busy", status: 503) })
        // Immediate mode keeps trying after the call gave up (a manual dispatcher would stop).
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: 0))
        fixture.record(1)
        await #expect { try await dispatcher.dispatch(timeout: 0.5) } throws: { error in
            (error as? DeliveryError)?.code == .timedOut
        }
        #expect(dispatcher.status.waitingDispatches == 0)
        #expect(await eventually { dispatcher.status.statistics.failedRequests >= 1 })
        await dispatcher.shutdown()
    }

    @Test func aCancelledDispatchThrowsCancelled() async throws {
        let fixture = try DeliveryFixture(handler: { _ in .text("busy", status: 503) })
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: -1))
        fixture.record(1)
        let task = Task { try await dispatcher.dispatch() }
        // Cancelled while it retries against a busy collector.
        #expect(await eventually { fixture.server.requestCount >= 1 })
        task.cancel()
        await #expect { try await task.value } throws: { ($0 as? DeliveryError)?.code == .cancelled }
        await dispatcher.shutdown()
    }

    @Test func timerDispatchWaitsForTheIntervalOnTheDispatchersClock() async throws {
        let clock = ManualClock()
        let fixture = try DeliveryFixture(clock: clock)
        var configuration = fixture.configuration(interval: 60)
        configuration.isDebugMode = true
        let dispatcher = fixture.dispatcher(configuration)
        fixture.record(5)
        clock.advance(by: 59)
        #expect(await fixture.settle(dispatcher) == .timer)
        #expect(fixture.server.requestCount == 0)
        clock.advance(by: 2)
        dispatcher.poke()
        #expect(await fixture.collector.waitUntilStored(5))
        // Once this tick's flush is over, the next tick is an interval after this one.
        #expect(
            await eventually {
                fixture.logged(.debug).filter { $0.contains("waiting for the dispatch timer") }.count == 2
            })
        fixture.record(2, from: 5)
        clock.advance(by: 30)
        #expect(await fixture.settle(dispatcher) == .timer)
        #expect(fixture.collector.storedCount == 5)
        clock.advance(by: 31)
        dispatcher.poke()
        #expect(await fixture.collector.waitUntilStored(7))
        await dispatcher.shutdown()
    }

    @Test func changingTheIntervalTakesEffect() async throws {
        let fixture = try DeliveryFixture()
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: -1))
        #expect(dispatcher.dispatchInterval == -1)
        fixture.record(3)
        #expect(await fixture.settle(dispatcher) == .manual)
        #expect(fixture.server.requestCount == 0)
        dispatcher.setDispatchInterval(0)
        #expect(dispatcher.dispatchInterval == 0)
        #expect(await fixture.collector.waitUntilStored(3))
        await dispatcher.shutdown()
    }

    @Test func disableStopsRecordingAndSendingAndIsRemembered() async throws {
        let fixture = try DeliveryFixture()
        let dispatcher = fixture.dispatcher()
        dispatcher.disable()
        #expect(!dispatcher.isEnabled)
        #expect(await dispatcher.track("ignored", distinctId: "u1") == nil)
        #expect(await dispatcher.updateTraits(distinctId: "u1", traits: ["plan": "pro"]) == nil)
        await #expect { try await dispatcher.dispatch(timeout: 5) } throws: {
            ($0 as? DeliveryError)?.code == .disabled
        }
        // Another part of the app records into the log meanwhile: kept, not sent.
        let other = try #require(fixture.recorder.record("from_elsewhere"))
        #expect(await fixture.settle(dispatcher) == .disabled)
        #expect(fixture.server.requestCount == 0)
        await dispatcher.shutdown()

        let relaunched = fixture.dispatcher()
        #expect(!relaunched.isEnabled)
        relaunched.enable()
        try await relaunched.dispatch(timeout: 60)
        #expect(fixture.collector.messages.map(\.messageId) == [other.messageId])
        #expect(await relaunched.track("counted", distinctId: "u1") != nil)
        #expect(await fixture.collector.waitUntilStored(2))
        await relaunched.shutdown()
    }

    /// Opted out (the recorder keeps the choice), nothing is sent, even what was recorded before;
    /// a dispatch() waiting at that moment fails; after opting in, what was kept is delivered.
    @Test func optingOutStopsSendingAndOptingInSendsWhatWasKept() async throws {
        let fixture = try DeliveryFixture()
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: -1))
        let kept = fixture.record(3)
        await fixture.recorder.optOut(discardingPending: false)
        #expect(await fixture.settle(dispatcher) == .optedOut)
        await #expect { try await dispatcher.dispatch(timeout: 5) } throws: {
            ($0 as? DeliveryError)?.code == .optedOut
        }
        #expect(fixture.server.requestCount == 0)
        await dispatcher.shutdown()

        // A relaunch still opted out sends nothing either; opting in sends what was kept.
        let relaunched = fixture.dispatcher(fixture.configuration(interval: -1))
        #expect(await fixture.settle(relaunched) == .optedOut)
        #expect(fixture.server.requestCount == 0)
        await fixture.recorder.optIn()
        let report = try await relaunched.dispatch(timeout: 60)
        #expect(report.deliveredEvents == 3)
        #expect(fixture.collector.messages.map(\.messageId) == kept)
        await relaunched.shutdown()
    }

    /// Concurrent calls for different users: every event is in a session of its own user (the
    /// session check and the record are one step under the recorder's lock).
    @Test func concurrentTracksForDifferentUsersKeepTheirSessions() async throws {
        let fixture = try DeliveryFixture()
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: -1))
        let events = try await withThrowingTaskGroup(of: (String, Event?).self) { group in
            for index in 0..<300 {
                let user = "u\(index % 3)"
                group.addTask { (user, await dispatcher.track("e\(index)", distinctId: user)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let owners = Dictionary(
            uniqueKeysWithValues: await fixture.recorder.listAllSessions().map { ($0.id, $0.userId) })
        for (user, event) in events {
            let event = try #require(event)
            #expect(event.userId == user)
            #expect(owners[event.sessionId] == user, "\(event.name) of \(user)")
        }
        await dispatcher.shutdown()
    }

    @Test func trackAndUpdateTraitsFollowTheDistinctId() async throws {
        let fixture = try DeliveryFixture()
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: -1))
        await dispatcher.track("open", distinctId: "u1", properties: ["screen": "home"])
        await dispatcher.track("tap", distinctId: "u1")
        await dispatcher.updateTraits(distinctId: "u2", traits: ["plan": "pro"])
        await dispatcher.track("buy", distinctId: "u2", properties: ["amount": 3])
        await dispatcher.track("anonymous-continues")
        try await dispatcher.dispatch(timeout: 60)
        let messages = fixture.collector.messages
        #expect(messages.map(\.type) == ["track", "track", "identify", "track", "track"])
        #expect(messages.map(\.userId) == ["u1", "u1", "u2", "u2", "u2"])
        #expect(messages[0].properties == ["screen": "home"])
        #expect(messages[2].properties == ["plan": "pro"])
        #expect(Set(messages.prefix(2).map(\.sessionId)).count == 1)
        #expect(messages[1].sessionId != messages[2].sessionId)
        await dispatcher.shutdown()
    }

    @Test func theClassLevelMethodsUseTheSharedDispatcher() async throws {
        try await ProcessDefaults.exclusively {
            // The shared instance is process-wide (TouchpointSDK.start sets it too): one such test at a time.
            let fixture = try DeliveryFixture()
            if EventDispatcher.shared == nil {
                await #expect { try await EventDispatcher.dispatch(timeout: 1) } throws: {
                    ($0 as? DeliveryError)?.code == .notStarted
                }
                #expect(await EventDispatcher.track("early") == nil)
            }
            let dispatcher = EventDispatcher.start(
                writeKey: DeliveryFixture.writeKey, endpoint: fixture.server.baseURL, recorder: fixture.recorder,
                configuration: fixture.configuration(interval: -1))
            #expect(EventDispatcher.shared === dispatcher)
            EventDispatcher.setDebugMode(true)
            #expect(dispatcher.isDebugMode)
            EventDispatcher.setDispatchInterval(-1)
            await EventDispatcher.track("Event name", distinctId: "user-9", properties: ["key": "value"])
            await EventDispatcher.updateTraits(distinctId: "user-9", traits: ["key": "value"])
            EventDispatcher.disable()
            #expect(!dispatcher.isEnabled)
            EventDispatcher.enable()
            try await EventDispatcher.dispatch(timeout: 60)
            #expect(fixture.collector.messages.map(\.name) == ["Event name", nil])
            #expect(fixture.collector.messages.map(\.type) == ["track", "identify"])
            #expect(fixture.collector.messages.allSatisfy { $0.userId == "user-9" })
            await dispatcher.shutdown()
        }
    }

    @Test func debugModeLogsWhatIsSentAndWhyItWaits() async throws {
        let fixture = try DeliveryFixture()
        let quiet = fixture.dispatcher(fixture.configuration(interval: -1))
        fixture.record(3)
        try await quiet.dispatch(timeout: 60)
        await quiet.shutdown()
        #expect(fixture.logged(.debug).isEmpty)

        let verbose = fixture.dispatcher(fixture.configuration(interval: -1))
        verbose.setDebugMode(true)
        fixture.record(2, from: 3)
        try await verbose.dispatch(timeout: 60)
        let debug = fixture.logged(.debug)
        #expect(debug.contains { $0.hasPrefix("sending 2 events") && $0.contains("sentAt") })
        #expect(debug.contains { $0.contains("acknowledged 2 events") })
        #expect(debug.contains { $0.contains("waiting: manual dispatch") })
        verbose.setDebugMode(false)
        #expect(!verbose.isDebugMode)
        await verbose.shutdown()
    }

    @Test func largeBodiesAreGzippedAndSmallOnesAreNot() async throws {
        let fixture = try DeliveryFixture()
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: -1))
        fixture.record(1)
        try await dispatcher.dispatch(timeout: 60)
        #expect(fixture.collector.counters.gzipRequests == 0)
        fixture.record(200, from: 1)
        try await dispatcher.dispatch(timeout: 60)
        #expect(fixture.collector.counters.gzipRequests == 1)
        #expect(fixture.collector.storedCount == 201)
        #expect(fixture.server.requests.last?.headers["Content-Encoding"] == "gzip")
        await dispatcher.shutdown()

        var plain = fixture.configuration(interval: -1)
        plain.gzipThreshold = nil
        let uncompressed = fixture.dispatcher(plain)
        fixture.record(200, from: 201)
        try await uncompressed.dispatch(timeout: 60)
        #expect(fixture.collector.counters.gzipRequests == 1)
        #expect(fixture.collector.storedCount == 401)
        await uncompressed.shutdown()
    }

    @Test func aCollectorThatRefusesGzipGetsPlainBodies() async throws {
        let collector = TestCollector(writeKey: DeliveryFixture.writeKey)
        let fixture = try DeliveryFixture(collector: collector) { request in
            if request.headers["Content-Encoding"] != nil { return .text("no content coding", status: 415) }
            return await collector.handle(request)
        }
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: -1))
        fixture.record(300)
        let report = try await dispatcher.dispatch(timeout: 60)
        #expect(report.deliveredEvents == 300)
        #expect(report.droppedEvents == 0)
        #expect(fixture.server.requestCount == 2)
        #expect(fixture.logged(.warning).contains { $0.contains("refused a gzipped request") })
        await dispatcher.shutdown()
    }

    @Test func a413SplitsTheBatchAndASingleEventTooLargeIsDroppedAndLogged() async throws {
        let fixture = try DeliveryFixture(
            collector: TestCollector(writeKey: DeliveryFixture.writeKey, maximumBodyBytes: 4_000))
        var configuration = fixture.configuration(interval: -1)
        configuration.gzipThreshold = nil
        let dispatcher = fixture.dispatcher(configuration)
        let before = fixture.record(30)
        let big = try #require(
            fixture.recorder.record("big", properties: ["blob": .string(String(repeating: "b", count: 5_000))]))
        let after = fixture.record(30, from: 30)
        let report = try await dispatcher.dispatch(timeout: 60)
        #expect(report.droppedEvents == 1)
        #expect(report.deliveredEvents == 60)
        #expect(fixture.collector.messages.map(\.messageId) == before + after)
        #expect(fixture.logged(.error).contains { $0.contains("dropped 1 events") && $0.contains(big.messageId) })
        #expect(fixture.logged(.notice).contains { $0.contains("answered 413") })
        await dispatcher.shutdown()
    }

    @Test func aBatchRefusedWithA400IsDroppedAloneAndLogged() async throws {
        let collector = TestCollector(writeKey: DeliveryFixture.writeKey)
        let fixture = try DeliveryFixture(collector: collector) { request in
            if request.bodyText.contains("poison") { return .json(["error": "malformed"], status: 400) }
            return await collector.handle(request)
        }
        var configuration = fixture.configuration(interval: -1)
        configuration.gzipThreshold = nil
        configuration.batchLimits = BatchLimits(maximumEvents: 5)
        let dispatcher = fixture.dispatcher(configuration)
        let first = fixture.record(5)
        let poisoned = fixture.record(4, from: 5) + fixture.record(1, name: "poison")
        let last = fixture.record(5, from: 10)
        let report = try await dispatcher.dispatch(timeout: 60)
        #expect(report.droppedEvents == 5)
        #expect(collector.messages.map(\.messageId) == first + last)
        let error = try #require(fixture.logged(.error).first)
        #expect(error.contains("dropped 5 events (\(poisoned.first!) … \(poisoned.last!))"))
        #expect(error.contains("400"))
        await dispatcher.shutdown()
    }

    @Test func retryAfterIsWaitedOut() async throws {
        let collector = TestCollector(writeKey: DeliveryFixture.writeKey)
        let arrivals = Locked<[Date]>([])
        let fixture = try DeliveryFixture(collector: collector) { request in
            let count = arrivals.withLock {
                $0.append(Date()); return $0.count
            }
            if count == 1 { return .text("slow down", status: 429, headers: ["Retry-After": "1"]) }
            return await collector.handle(request)
        }
        let dispatcher = fixture.dispatcher()
        fixture.record(1)
        // Generous: the whole suite shares two cores; a lost wake-up still fails here.
        try #require(await collector.waitUntilStored(1, timeout: 60))
        let times = arrivals.value
        try #require(times.count == 2)
        #expect(times[1].timeIntervalSince(times[0]) >= 1)
        await dispatcher.shutdown()
    }

    @Test func eventsRecordedWhileABatchIsInFlightGoInTheNextOne() async throws {
        let collector = TestCollector(writeKey: DeliveryFixture.writeKey)
        let recorderBox = Locked<EventRecorder?>(nil)
        let fixture = try DeliveryFixture(collector: collector) { request in
            if collector.counters.requests == 0, let recorder = recorderBox.value {
                for index in 0..<7 { recorder.record("during", properties: ["index": .int(index)]) }
            }
            return await collector.handle(request)
        }
        recorderBox.withLock { $0 = fixture.recorder }
        let dispatcher = fixture.dispatcher()
        fixture.record(3)
        #expect(await collector.waitUntilStored(10))
        let names = collector.messages.map(\.name)
        #expect(names.filter { $0 == "during" }.count == 7)
        #expect(collector.counters.duplicates == 0)
        #expect(collector.counters.requests >= 2)
        await dispatcher.shutdown()
    }

    @Test func theCursorSurvivesARestartAndStartUpNeverReadsDeliveredHistory() async throws {
        let fixture = try DeliveryFixture()
        let first = fixture.dispatcher(fixture.configuration(interval: -1))
        let session = await fixture.recorder.startSession(userID: "u1")
        fixture.record(50)
        try await first.dispatch(timeout: 60)
        let cursor = first.status.cursor
        await first.shutdown()

        // Rewrite the delivered history with events that were never recorded (same byte length):
        // a restart that read history again would send them.
        let path =
            fixture.directory.path + "/"
            + LogLayout(base: fixture.directory.url).relativeSessionDirectory(
                userId: "u1", sessionId: session.id) + "/events.jsonl"
        var text = try String(contentsOfFile: path, encoding: .utf8)
        // (The open log ends with the zeros of space allocated for the next events.)
        let lines = text.split(separator: "\n").filter { !$0.hasPrefix("\0") }
        for event in try lines.map({ try Event(jsonLine: String($0)) }) {
            text = text.replacingOccurrences(of: event.messageId, with: UUID().uuidString)
        }
        try text.write(toFile: path, atomically: false, encoding: .utf8)

        let second = fixture.dispatcher(fixture.configuration(interval: -1))
        #expect(second.status.cursor == cursor)
        await fixture.recorder.startSession(userID: "u2")
        let fresh = fixture.record(2, from: 50)
        try await second.dispatch(timeout: 60)
        #expect(fixture.collector.storedCount == 52)
        #expect(Array(fixture.collector.messages.suffix(2).map(\.messageId)) == fresh)
        await second.shutdown()
    }

    @Test func theRetryStateSurvivesARestart() async throws {
        let clock = ManualClock()
        let fixture = try DeliveryFixture(clock: clock)
        fixture.server.enqueue(.text("maintenance", status: 503, headers: ["Retry-After": "120"]))
        let first = fixture.dispatcher()
        fixture.record(1)
        #expect(await eventually { first.status.consecutiveFailures == 1 })
        let nextAttempt = try #require(first.status.nextAttempt)
        #expect(nextAttempt == clock.now().addingTimeInterval(5))  // Retry-After capped by the test policy
        await first.shutdown()

        let second = fixture.dispatcher()
        #expect(second.status.consecutiveFailures == 1)
        #expect(second.status.nextAttempt == nextAttempt)
        #expect(await fixture.settle(second) == .backoff)
        #expect(fixture.server.requestCount == 1)  // no request before the saved next attempt
        clock.advance(by: 6)
        second.poke()
        #expect(await fixture.collector.waitUntilStored(1))
        #expect(await eventually { second.status.consecutiveFailures == 0 })
        await second.shutdown()
    }

    @Test func offlinePausesAndOnlineRetriesAtOnce() async throws {
        let fixture = try DeliveryFixture()
        let monitor = ManualReachabilityMonitor(status: .offline)
        var configuration = fixture.configuration()
        configuration.reachability = monitor
        // A network failure would otherwise wait at least 30 s.
        configuration.backoff = Backoff.Policy(initialDelay: 60, maximumDelay: 60, minimumDelay: 30)
        let dispatcher = fixture.dispatcher(configuration)
        fixture.record(2)
        #expect(await fixture.settle(dispatcher) == .offline)
        #expect(fixture.server.requestCount == 0)
        #expect(dispatcher.status.consecutiveFailures == 0)

        fixture.server.stop()
        monitor.send(.online)
        #expect(await eventually { dispatcher.status.consecutiveFailures == 1 })
        try fixture.server.restart()
        monitor.send(.offline)
        monitor.send(.online)  // the network is back: no 30 s wait
        #expect(await fixture.collector.waitUntilStored(2, timeout: 10))
        await dispatcher.shutdown()
    }

    @Test func goingToTheBackgroundSendsWhatIsPending() async throws {
        let fixture = try DeliveryFixture()
        let lifecycle = ManualAppLifecycle()
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: 3600))
        dispatcher.attach(lifecycle: lifecycle)
        fixture.record(4)
        #expect(await fixture.settle(dispatcher) == .timer)
        #expect(fixture.server.requestCount == 0)
        lifecycle.send(.didEnterBackground)
        #expect(await fixture.collector.waitUntilStored(4))
        await dispatcher.shutdown()
    }

    @Test func undeliveredSessionsAreKeptFromRetention() async throws {
        let clock = ManualClock()
        let fixture = try DeliveryFixture(clock: clock, retention: RetentionPolicy(maximumAge: 60))
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: -1))
        let old = await fixture.recorder.startSession(userID: "u1")
        fixture.record(3)
        await fixture.recorder.startSession(userID: "u2")
        fixture.record(1)
        clock.advance(by: 120)
        let kept = await fixture.recorder.applyRetention()
        #expect(kept.keptForConsumers == [old.id])
        #expect(kept.deletedSessions.isEmpty)
        try await dispatcher.dispatch(timeout: 60)
        let deleted = await fixture.recorder.applyRetention()
        #expect(deleted.deletedSessions == [old.id])
        #expect(fixture.collector.storedCount == 4)
        await dispatcher.shutdown()
    }

    @Test func clearingTheLogStartsDeliveryOverAtItsStart() async throws {
        let fixture = try DeliveryFixture()
        let dispatcher = fixture.dispatcher(fixture.configuration(interval: -1))
        fixture.record(10)
        try await dispatcher.dispatch(timeout: 60)
        await fixture.recorder.clear()
        #expect(dispatcher.status.cursor == .start)
        let fresh = fixture.record(3, from: 10)
        try await dispatcher.dispatch(timeout: 60)
        #expect(Array(fixture.collector.messages.suffix(3).map(\.messageId)) == fresh)
        #expect(fixture.collector.storedCount == 13)
        await dispatcher.shutdown()
    }

    @Test func aSessionResumedAfterARelaunchIsDeliveredExactlyOnce() async throws {
        let clock = ManualClock()
        let fixture = try DeliveryFixture(clock: clock)
        let first = fixture.dispatcher(fixture.configuration(interval: -1))
        let session = await fixture.recorder.startSession(userID: "u1")
        fixture.record(5)
        try await first.dispatch(timeout: 60)
        await first.shutdown()

        var configuration = EventRecorderConfiguration()
        configuration.clock = clock
        let relaunched = EventRecorder(directory: fixture.directory.url, configuration: configuration)
        clock.advance(by: 10)
        let more = (5..<10).compactMap { relaunched.record("tap", properties: ["index": .int($0)]) }
        #expect(more.allSatisfy { $0.sessionId == session.id })
        let second = fixture.dispatcher(fixture.configuration(interval: -1), recorder: relaunched)
        try await second.dispatch(timeout: 60)
        #expect(fixture.collector.storedCount == 10)
        #expect(fixture.collector.counters.duplicates == 0)
        #expect(Array(fixture.collector.messages.suffix(5).map(\.messageId)) == more.map(\.messageId))
        await second.shutdown()
    }

    @Test func theStatusStreamReportsProgress() async throws {
        let fixture = try DeliveryFixture()
        var configuration = fixture.configuration(interval: -1)
        configuration.batchLimits = BatchLimits(maximumEvents: 10)
        let dispatcher = fixture.dispatcher(configuration)
        fixture.record(30)
        #expect(dispatcher.backlog().bytes > 0)
        let updates = dispatcher.statusUpdates()
        try await dispatcher.dispatch(timeout: 60)
        let final = await withTimeout(5) { () -> DeliveryStatus? in
            for await status in updates where status.statistics.deliveredEvents == 30 { return status }
            return nil
        }
        #expect(final??.statistics.requests == 3)
        #expect(dispatcher.backlog() == DeliveryBacklog())
        await dispatcher.shutdown()
    }
}

extension DispatcherTests {
    @Test func theRequestCeilingHoldsRequestsOnTheDispatchersClock() async throws {
        let clock = ManualClock()
        let fixture = try DeliveryFixture(clock: clock)
        var configuration = fixture.configuration(interval: 0)
        configuration.maximumRequestsPerMinute = 6  // one every 10 s after the first
        configuration.requestBurst = 1
        configuration.batchLimits = BatchLimits(maximumEvents: 1)
        let dispatcher = fixture.dispatcher(configuration)
        fixture.record(3)
        #expect(await fixture.collector.waitUntilStored(1))
        #expect(await fixture.settle(dispatcher) == .rateLimit)
        #expect(fixture.server.requestCount == 1)
        clock.advance(by: 9)
        #expect(await fixture.settle(dispatcher) == .rateLimit)
        #expect(fixture.server.requestCount == 1)
        clock.advance(by: 1)
        dispatcher.poke()
        #expect(await fixture.collector.waitUntilStored(2))
        #expect(await fixture.settle(dispatcher) == .rateLimit)
        #expect(fixture.server.requestCount == 2)
        clock.advance(by: 10)
        dispatcher.poke()
        #expect(await fixture.collector.waitUntilStored(3))
        await dispatcher.shutdown()
    }
}
