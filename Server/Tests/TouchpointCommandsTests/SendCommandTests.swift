import Foundation
import Testing
import Touchpoint
import TouchpointTesting

/// `touchpoint send` as a user runs it, and killed as a phone kills an app.
struct SendCommandTests {
    static func sendArguments(_ fixture: SendFixture, _ extra: [String] = []) -> [String] {
        [
            "send", "--collector", fixture.server.baseURL.absoluteString, "--write-key", SendFixture.writeKey,
            "--dir", fixture.directory.path,
        ] + extra
    }

    @Test func sendDeliversTheLogWithOneLinePerBatchWhenNotATerminal() async throws {
        let fixture = try SendFixture()
        let ids = fixture.record(250)
        let child = try KillableProcess(
            KillableProcess.touchpoint, Self.sendArguments(fixture, ["--batch-events", "100"]),
            logsIn: fixture.directory.url)
        let result = await child.finish()
        #expect(result.status == 0, "\(result.errors)")
        #expect(fixture.collector.messages.map(\.messageId) == ids)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("sending ") == true)
        #expect(lines.contains { $0.hasPrefix("delivered 100 events (") })
        #expect(lines.contains("delivered 250 events (100%)"))
        #expect(lines.last?.hasPrefix("done: 250 events delivered") == true)
        #expect(!result.output.contains("\r"))

        // A second run finds nothing pending.
        let again = await
            (try KillableProcess(KillableProcess.touchpoint, Self.sendArguments(fixture), logsIn: fixture.directory.url))
            .finish()
        #expect(again.status == 0)
        #expect(again.output.contains("done: 0 events delivered"))
        #expect(fixture.collector.counters.receivedMessages == 250)
    }

    @Test func sendDrawsAProgressBarOnATerminal() async throws {
        let fixture = try SendFixture()
        fixture.record(300)
        let command = ([KillableProcess.touchpoint.path] + Self.sendArguments(fixture, ["--batch-events", "50"]))
            .map { "'\($0)'" }.joined(separator: " ")
        // `script` runs the command on a pseudo-terminal, as a person at a terminal would.
        let child = try KillableProcess(
            URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"], logsIn: fixture.directory.url)
        let result = await child.finish()
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("\r["))
        #expect(result.output.contains("] 100%"))
        #expect(result.output.contains("done: 300 events delivered"))
        #expect(fixture.collector.storedCount == 300)
    }

    @Test func sendFailsWithAReasonWhenTheCollectorIsDown() async throws {
        let fixture = try SendFixture()
        fixture.server.stop()
        fixture.record(3)
        let result = await
            (try KillableProcess(
                KillableProcess.touchpoint, Self.sendArguments(fixture, ["--fail-fast"]), logsIn: fixture.directory.url))
            .finish()
        #expect(result.status != 0)
        #expect(result.errors.contains("collectorUnavailable"))
        #expect(result.output.contains("stopped: 0 events delivered"))
        let bad = await
            (try KillableProcess(
                KillableProcess.touchpoint,
                ["send", "--collector", "ftp://x", "--write-key", "k", "--dir", fixture.directory.path],
                logsIn: fixture.directory.url)).finish()
        #expect(bad.status != 0)
        #expect(bad.errors.contains("--collector: not an http or https URL"))
    }

    @Test(arguments: [11, 23, 37])
    func aSendKilledMidUploadResumesWithNoLossAndNoDuplicateStored(seed: UInt64) async throws {
        let collector = TestCollector(writeKey: SendFixture.writeKey)
        // Requests are numbered; the one numbered `holdAt` is stored, then held without an answer
        // until the test has killed the sender, so every kill lands mid-upload whatever the load.
        // A request that arrives while one is held is the sender's retry after its request timeout
        // (30 s; a loaded machine can be that slow to kill): each may re-send one more batch.
        struct Hold { var entered = 0, holdAt = 0, holding = false, released = false, retriesWhileHeld = 0 }
        let hold = Locked(Hold())
        let fixture = try SendFixture(collector: collector) { request in
            let number = hold.withLock {
                if $0.holding && !$0.released { $0.retriesWhileHeld += 1 }
                $0.entered += 1
                return $0.entered
            }
            let response = await collector.handle(request)
            guard
                hold.withLock({ state -> Bool in
                    guard number == state.holdAt else { return false }
                    state.holding = true
                    return true
                })
            else { return response }
            while !hold.withLock({ $0.released }) { try? await Task.sleep(nanoseconds: 2_000_000) }
            return response
        }
        var recorded: [String] = []
        for session in 0..<4 {
            await fixture.recorder.startSession(userID: "user-\(session % 2)")
            recorded += fixture.record(1_000, from: session * 1_000)
        }
        try await fixture.recorder.flush()

        let batch = 100
        let arguments = Self.sendArguments(fixture, ["--batch-events", "\(batch)"])
        var random = SeededRandomNumberGenerator(seed: seed)
        var kills = 0
        for _ in 0..<4 {
            let skip = Int.random(in: 1...4, using: &random)
            hold.withLock {
                $0.holdAt = $0.entered + skip; $0.holding = false; $0.released = false
            }
            let child = try KillableProcess(KillableProcess.touchpoint, arguments, logsIn: fixture.directory.url)
            let held = await eventually(timeout: .seconds(60)) {
                hold.withLock { $0.holding } || !child.child.isRunning
            }
            #expect(held)
            child.kill()
            let result = await child.finish()
            hold.withLock { $0.released = true }
            if result.killed { kills += 1 } else { break }
        }
        #expect(kills > 0)
        #expect(collector.storedCount < recorded.count)  // the kills left work to do

        let final = await (try KillableProcess(KillableProcess.touchpoint, arguments, logsIn: fixture.directory.url))
            .finish()
        #expect(final.status == 0, "\(final.errors)")
        #expect(collector.storedCount == recorded.count)
        #expect(Set(collector.messages.map(\.messageId)) == Set(recorded))
        #expect(collector.messages.map(\.messageId) == recorded)  // in log order, too
        // Re-sent events are at most one batch per kill (and per timed-out request): the cursor
        // moves after every acknowledgement.
        let retries = hold.withLock { $0.retriesWhileHeld }
        #expect(collector.counters.duplicates <= (kills + retries) * batch)
    }
}
