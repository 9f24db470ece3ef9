import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointRouting
import TouchpointTesting

@Suite(.timeLimit(.minutes(2)))
struct PipelineTests {
    @Test func bothDoorsFromSeveralThreadsReachEveryAdapterInLogOrderOnce() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let adapters = (0..<3).map { InMemoryAdapter(name: "Adapter\($0)") }
        harness.tracker.startTracking(adapters: adapters)

        let threads = 4
        let perThread = 150
        let tracker = harness.tracker
        let recorder = harness.recorder
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: threads) { lane in
                    for index in 0..<perThread {
                        if index % 2 == 0 {
                            tracker.trigger(Numbered(lane: lane, index: index))
                        } else {
                            recorder.record("untyped \(lane) \(index)", properties: ["index": .int(index)])
                        }
                    }
                }
                done.resume()
            }
        }
        #expect(await harness.delivered())

        let logged = await harness.loggedNames()
        #expect(logged.count == threads * perThread)
        #expect(Set(logged).count == logged.count)
        for adapter in adapters {
            #expect(adapter.eventNames == logged, "\(adapter.name) saw another order")
        }
        // Each door kept its kind: typed events arrive as their own type, the others as RecordedEvent.
        let types = Set(
            adapters[0].deliveries.compactMap { delivery -> String? in
                if case .event(_, _, let type) = delivery { return type }
                return nil
            })
        #expect(types == ["Numbered", "RecordedEvent"])
        #expect(harness.tracker.statistics.received == threads * perThread)
    }

    @Test func typedEventsReachAdaptersAsTheTriggeredValue() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let adapter = InMemoryAdapter()
        harness.tracker.startTracking(adapters: [adapter])
        let recorded = try #require(harness.tracker.trigger(Numbered(lane: 1, index: 2)))
        #expect(recorded.name == "Numbered: 1 - 2")
        #expect(recorded.properties == ["lane": .int(1), "index": .int(2)])
        #expect(await harness.delivered())
        #expect(
            adapter.deliveries == [
                .event(name: "Numbered: 1 - 2", metadata: ["lane": 1, "index": 2], type: "Numbered")
            ])
    }

    @Test func eventsBeforeStartWaitAndTheQueueIsBounded() async throws {
        var configuration = GlobalTrackerConfiguration()
        configuration.queueCapacity = 5
        let harness = try RoutingHarness(configuration: configuration)
        defer { harness.tracker.stopTracking() }
        for index in 0..<8 { harness.tracker.trigger(Numbered(lane: 0, index: index)) }
        #expect(harness.tracker.statistics.droppedBeforeStart == 3)
        #expect(harness.tracker.statistics.waiting == 5)

        let adapter = InMemoryAdapter()
        harness.tracker.startTracking(adapters: [adapter])
        #expect(await harness.delivered())
        #expect(adapter.eventNames == (3..<8).map { "Numbered: 0 - \($0)" })
        #expect(await harness.loggedNames().count == 8)  // the log keeps everything
    }

    @Test func eventsWaitForAnAdaptersConfigureAndArriveInOrder() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let slow = SlowConfigureAdapter()
        let quick = InMemoryAdapter(name: "Quick")
        harness.tracker.startTracking(adapters: [slow, quick])
        #expect(await eventually { slow.gate.arrivals == 1 })
        for index in 0..<5 { harness.tracker.trigger(Numbered(lane: 0, index: index)) }
        harness.tracker.update(AgeProperty(value: 7))

        #expect(await harness.delivered(to: ["Quick"]))
        #expect(quick.eventNames.count == 5)
        #expect(slow.received.deliveries.isEmpty)
        #expect(harness.tracker.statistics[adapter: "SlowConfigureAdapter"]?.isConfigured == false)
        #expect(harness.tracker.statistics[adapter: "SlowConfigureAdapter"]?.pending == 6)

        slow.gate.open()
        #expect(await harness.delivered())
        #expect(slow.received.deliveries == quick.deliveries)
        #expect(slow.received.configureCount == 0)  // the gate adapter keeps its own count
    }

    @Test func aSlowAdapterDelaysOnlyItself() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let slow = GatedAdapter(name: "Slow")
        defer { slow.gate.open(100) }
        let fast = InMemoryAdapter(name: "Fast")
        harness.tracker.startTracking(adapters: [slow, fast])

        for index in 0..<20 { harness.tracker.trigger(Numbered(lane: 0, index: index)) }
        #expect(await harness.delivered(to: ["Fast"]))
        #expect(fast.eventNames.count == 20)
        #expect(await eventually { slow.gate.arrivals == 1 })
        #expect(slow.received.eventNames.isEmpty)  // still stuck in its first call

        slow.gate.open(20)
        #expect(await harness.delivered())
        #expect(slow.received.eventNames == fast.eventNames)
    }

    @Test func aHangingAdapterLosesOnlyItsOwnOldestEvents() async throws {
        var configuration = GlobalTrackerConfiguration()
        configuration.queueCapacity = 4
        let harness = try RoutingHarness(configuration: configuration)
        defer { harness.tracker.stopTracking() }
        let hanging = GatedAdapter(name: "Hanging")
        defer { hanging.gate.open(100) }
        let fast = InMemoryAdapter(name: "Fast")
        harness.tracker.startTracking(adapters: [hanging, fast])

        harness.tracker.trigger(Numbered(lane: 0, index: 0))
        #expect(await eventually { hanging.gate.arrivals == 1 })
        for index in 1..<10 {
            harness.tracker.trigger(Numbered(lane: 0, index: index))
            #expect(await harness.delivered(to: ["Fast"]))
        }
        #expect(fast.eventNames.count == 10)
        #expect(!(await harness.tracker.waitUntilDelivered(timeout: .milliseconds(50))))
        #expect(harness.tracker.statistics[adapter: "Hanging"]?.dropped == 5)
        #expect(harness.tracker.statistics[adapter: "Fast"]?.dropped == 0)

        hanging.gate.open(100)
        #expect(await harness.delivered())
        #expect(hanging.received.eventNames == [0, 6, 7, 8, 9].map { "Numbered: 0 - \($0)" })
    }

    @Test func anAdapterThatThrowsIsLoggedAndKeepsReceiving() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let lines = LogLines()
        harness.tracker.loggingLevel = .info
        harness.tracker.log { lines.append($0) }
        let failing = FailingAdapter()
        harness.tracker.startTracking(adapters: [failing])

        harness.recorder.record("before")
        harness.recorder.record("boom")
        harness.recorder.record("identify", properties: ["secret": "x"], type: .identify)
        harness.recorder.record("after")
        harness.tracker.update(AgeProperty(value: 3))
        #expect(await harness.delivered())

        #expect(failing.received.eventNames == ["before", "after"])
        #expect(failing.received.properties.map(\.identifier) == ["age"])
        let statistics = try #require(harness.tracker.statistics[adapter: "Failing"])
        #expect(statistics.failed == 2)
        #expect(statistics.delivered == 5)
        #expect(lines.all.contains("-[Failing]: EVENT FAILED - 'boom' - refused boom"))
        #expect(lines.all.contains("-[Failing]: PROPERTY FAILED - 'secret' - refused secret"))
    }

    @Test func anAdapterWhoseConfigureThrowsIsSkippedAndTheOthersCarryOn() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let lines = LogLines()
        harness.tracker.loggingLevel = .info
        harness.tracker.log { lines.append($0) }
        let broken = UnconfigurableAdapter()
        let healthy = InMemoryAdapter(name: "Healthy")
        harness.recorder.record("early")
        harness.tracker.startTracking(adapters: [broken, healthy])
        harness.recorder.record("late")
        #expect(await harness.delivered())

        #expect(healthy.eventNames == ["early", "late"])
        #expect(broken.calls.value == 0)
        let statistics = try #require(harness.tracker.statistics[adapter: "Broken"])
        #expect(statistics.configurationFailed)
        #expect(statistics.dropped == 2)
        #expect(lines.all.contains("-[Broken]: CONFIGURE FAILED - refused to configure"))
    }

    @Test func waitingForAHangingAdapterGivesUp() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let hanging = GatedAdapter(name: "Hanging")
        defer { hanging.gate.open(10) }
        harness.tracker.startTracking(adapters: [hanging])
        harness.recorder.record("stuck")
        #expect(await harness.tracker.waitUntilDelivered(timeout: .milliseconds(100)) == false)
        hanging.gate.open()
        #expect(await harness.delivered())
    }

    @Test func aStoppedTrackerNoLongerRoutes() async throws {
        let harness = try RoutingHarness()
        let adapter = InMemoryAdapter()
        harness.tracker.startTracking(adapters: [adapter])
        #expect(harness.tracker.isTracking)
        harness.recorder.record("kept")
        #expect(await harness.delivered())
        harness.tracker.stopTracking()
        #expect(!harness.tracker.isTracking)
        harness.recorder.record("after stop")
        harness.tracker.startTracking(adapters: [InMemoryAdapter(name: "Late")])
        #expect(harness.tracker.statistics.adapters.map(\.name) == ["InMemoryAdapter"])
        #expect(adapter.eventNames == ["kept"])
    }

    @Test func untypedIdentifyTraitsArriveAsRecordedProperties() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let adapter = InMemoryAdapter()
        harness.tracker.startTracking(adapters: [adapter])
        harness.recorder.record(
            "identify", properties: ["plan": "pro", "age": .int(40), "nick": .null], type: .identify)
        harness.recorder.record("Home", type: .screen)
        #expect(await harness.delivered())
        #expect(
            adapter.deliveries == [
                .property(identifier: "age", value: .int(40), type: "RecordedProperty"),
                .property(identifier: "nick", value: nil, type: "RecordedProperty"),
                .property(identifier: "plan", value: "pro", type: "RecordedProperty"),
                .event(name: "Home", metadata: [:], type: "RecordedEvent"),
            ])
    }

    @Test func scopedTrackerIsTheCurrentOneForTheStaticAPI() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let adapter = InMemoryAdapter()
        let lines = LogLines()
        GlobalTracker.$scoped.withValue(harness.tracker) {
            #expect(GlobalTracker.current === harness.tracker)
            GlobalTracker.loggingLevel = .verbose
            GlobalTracker.log { lines.append($0) }
            GlobalTracker.startTracking(adapters: [adapter])
            Tapped().trigger()
            EmailProperty(value: "a@b.c").update()
        }
        #expect(harness.tracker.loggingLevel == .verbose)
        #expect(await harness.delivered())
        #expect(adapter.eventNames == ["Button: Tapped"])
        #expect(adapter.properties.map(\.identifier) == ["email"])
        #expect(
            lines.all == [
                "-[InMemoryAdapter]: EVENT TRIGGERED - 'Button: Tapped'",
                "-[InMemoryAdapter]: PROPERTY UPDATED - 'email'\n > value: a@b.c",
            ])
    }
}
