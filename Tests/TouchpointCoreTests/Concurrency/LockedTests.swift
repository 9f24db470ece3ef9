import Foundation
import Testing
import TouchpointCore

struct LockedTests {
    @Test func withLockIfAvailableDoesNotWaitForAnotherHolder() {
        let locked = Locked(0)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        Thread {
            locked.withLock { _ in
                holding.signal()
                release.wait()
            }
            released.signal()
        }.start()
        holding.wait()
        #expect(locked.withLockIfAvailable { $0 += 1 } == nil, "held by the other thread: not run")
        release.signal()
        released.wait()
        #expect(
            locked.withLockIfAvailable { state -> Int in
                state += 1
                return state
            } == 1)
        #expect(locked.value == 1)
    }
}
