import Foundation
import Testing
import TouchpointCore

struct BackoffTests {
    let start = Date(timeIntervalSince1970: 1_767_225_600)

    @Test func ceilingGrowsExponentiallyUpToTheCap() {
        let policy = Backoff.Policy(initialDelay: 1, multiplier: 2, maximumDelay: 30)
        let ceilings = (0...8).map { policy.ceiling(afterFailures: $0) }
        #expect(ceilings == [0, 1, 2, 4, 8, 16, 30, 30, 30])
        #expect(policy.ceiling(afterFailures: 10_000) == 30)
        #expect(policy.ceiling(afterFailures: Int.max) == 30)
    }

    @Test func everyDelayLiesWithinItsJitterRange() {
        let policy = Backoff.Policy(initialDelay: 0.5, maximumDelay: 20, minimumDelay: 0.1)
        var backoff = Backoff(policy: policy)
        var random = SeededRandomNumberGenerator(seed: 1)
        var now = start
        for failure in 1...40 {
            let delay = backoff.recordFailure(at: now, using: &random)
            #expect(policy.delayRange(afterFailures: failure).contains(delay))
            #expect(delay >= 0.1 && delay <= 20)
            #expect(backoff.failures == failure)
            #expect(backoff.nextAttempt == now.addingTimeInterval(delay))
            now = backoff.nextAttempt!
        }
    }

    @Test func fullJitterSpreadsDelaysOverTheWholeRange() {
        // Many draws at the cap should reach both ends of [0, cap]: the jitter is "full".
        var random = SeededRandomNumberGenerator(seed: 99)
        let policy = Backoff.Policy(initialDelay: 10, maximumDelay: 10)
        var delays: [Double] = []
        for _ in 0..<2_000 {
            var backoff = Backoff(policy: policy)
            delays.append(backoff.recordFailure(at: start, using: &random))
        }
        #expect(delays.min()! < 0.5)
        #expect(delays.max()! > 9.5)
        #expect(Set(delays).count > 1_900)
    }

    @Test func theSameSeedGivesTheSameSchedule() {
        func schedule(seed: UInt64) -> [Double] {
            var random = SeededRandomNumberGenerator(seed: seed)
            var backoff = Backoff(policy: .init(initialDelay: 1, maximumDelay: 60))
            return (0..<12).map { _ in backoff.recordFailure(at: start, using: &random) }
        }
        #expect(schedule(seed: 42) == schedule(seed: 42))
        #expect(schedule(seed: 42) != schedule(seed: 43))
    }

    @Test func canAttemptOnlyAfterTheDelay() {
        var backoff = Backoff(policy: .init(initialDelay: 4, maximumDelay: 4, minimumDelay: 4))
        #expect(backoff.canAttempt(at: start))
        let delay = backoff.recordFailure(at: start)
        #expect(delay == 4)
        #expect(!backoff.canAttempt(at: start.addingTimeInterval(3.999)))
        #expect(backoff.remainingDelay(at: start.addingTimeInterval(1)) == 3)
        #expect(backoff.canAttempt(at: start.addingTimeInterval(4)))
        #expect(backoff.remainingDelay(at: start.addingTimeInterval(10)) == 0)
    }

    @Test func successResetsTheGrowth() {
        var backoff = Backoff(policy: .init(initialDelay: 1, maximumDelay: 100, minimumDelay: 0))
        var random = SeededRandomNumberGenerator(seed: 5)
        for _ in 0..<5 { backoff.recordFailure(at: start, using: &random) }
        #expect(backoff.failures == 5)
        backoff.recordSuccess()
        #expect(backoff.failures == 0)
        #expect(backoff.nextAttempt == nil)
        #expect(backoff.canAttempt(at: start))
        let delay = backoff.recordFailure(at: start, using: &random)
        #expect(delay <= 1)
    }

    @Test func retryAfterWinsWhenLongerAndIsCapped() {
        let policy = Backoff.Policy(initialDelay: 1, maximumDelay: 2, maximumRetryAfter: 120)
        var random = SeededRandomNumberGenerator(seed: 3)
        var backoff = Backoff(policy: policy)
        #expect(backoff.recordFailure(at: start, retryAfter: 30, using: &random) == 30)
        #expect(backoff.nextAttempt == start.addingTimeInterval(30))
        // A server asking for a day is obeyed only up to the policy's limit.
        #expect(backoff.recordFailure(at: start, retryAfter: 86_400, using: &random) == 120)
        // A Retry-After shorter than the drawn delay does not shorten it.
        var floored = Backoff(policy: .init(initialDelay: 5, maximumDelay: 5, minimumDelay: 5))
        #expect(floored.recordFailure(at: start, retryAfter: 1, using: &random) == 5)
    }

    @Test func restoredStateContinuesTheSchedule() {
        let policy = Backoff.Policy(initialDelay: 1, maximumDelay: 64, minimumDelay: 64)
        let saved = start.addingTimeInterval(50)
        var restored = Backoff(policy: policy, failures: 6, nextAttempt: saved)
        #expect(!restored.canAttempt(at: start))
        #expect(restored.canAttempt(at: saved))
        restored.recordFailure(at: saved)
        #expect(restored.failures == 7)
    }

    @Test func inconsistentPoliciesAreMadeSafe() {
        let policy = Backoff.Policy(
            initialDelay: -.infinity,
            multiplier: .nan,
            maximumDelay: 10,
            minimumDelay: 50,
            maximumRetryAfter: -1
        )
        #expect(policy.initialDelay == 0)
        #expect(policy.multiplier == 1)
        #expect(policy.minimumDelay == 10)
        #expect(policy.maximumRetryAfter == 0)
        var backoff = Backoff(policy: policy)
        #expect(backoff.recordFailure(at: start, retryAfter: 1_000) == 10)
    }
}
