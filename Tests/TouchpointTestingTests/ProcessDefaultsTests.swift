import Testing
import TouchpointCore
import TouchpointTesting

@Suite(.timeLimit(.minutes(1)))
struct ProcessDefaultsTests {
    struct Thrown: Error {}

    @Test func bodiesRunOneAtATime() async {
        let running = Locked((now: 0, most: 0, done: 0))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    await ProcessDefaults.exclusively {
                        running.withLock { state in
                            state.now += 1
                            state.most = max(state.most, state.now)
                        }
                        // Suspension points, where another body would start without the lock.
                        for _ in 0..<50 { await Task.yield() }
                        running.withLock { state in
                            state.now -= 1
                            state.done += 1
                        }
                    }
                }
            }
        }
        #expect(running.value.done == 8)
        #expect(running.value.most == 1)
    }

    @Test func aThrowingBodyLetsTheNextOneRun() async throws {
        await #expect(throws: Thrown.self) {
            try await ProcessDefaults.exclusively { throw Thrown() }
        }
        let value = await ProcessDefaults.exclusively { 42 }  // would wait forever if the lock were kept
        #expect(value == 42)
    }
}
