import Foundation
import Testing

@testable import TouchpointCore

struct RemoteResourceStateMachineTests {
    typealias Machine = RemoteResourceStateMachine<String>

    let start = Date(timeIntervalSince1970: 1_767_225_600)
    let policy = Backoff.Policy(initialDelay: 5, maximumDelay: 900, minimumDelay: 1)
    let failure = RemoteResourceError(
        code: .httpStatus,
        url: URL(string: "https://example.com/config.json")!,
        message: "the server answered 500",
        status: 500
    )

    func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }

    @Test func aFirstRefreshFetchesUnconditionally() {
        var machine = Machine(cacheTTL: 60, backoff: policy)
        do { let result = machine.decide(.ifStale, now: start); #expect(result == .fetch(etag: nil)) }
        #expect(machine.snapshot.value == nil)
        #expect(machine.snapshot.outcome == nil)
    }

    @Test func aFreshValueIsServedWithoutARequestUntilTheTTLEnds() {
        var machine = Machine(cacheTTL: 60, backoff: policy)
        do { let result = machine.received("v1", body: [1], etag: "\"1\"", now: start); #expect(result) }
        #expect(machine.snapshot.outcome == .fromNetwork)
        do { let result = machine.decide(.ifStale, now: at(59)); #expect(result == .serve(.fromFreshCache)) }
        #expect(machine.snapshot.outcome == .fromFreshCache)
        do { let result = machine.decide(.ifStale, now: at(60)); #expect(result == .fetch(etag: "\"1\"")) }
    }

    @Test func revalidationIgnoresTheTTLAndReloadIgnoresTheETag() {
        var machine = Machine(cacheTTL: 3600, backoff: policy)
        _ = machine.received("v1", body: [1], etag: "\"1\"", now: start)
        do { let result = machine.decide(.revalidate, now: at(1)); #expect(result == .fetch(etag: "\"1\"")) }
        do { let result = machine.decide(.reload, now: at(1)); #expect(result == .fetch(etag: nil)) }
    }

    @Test func notModifiedConfirmsTheValueAndRestartsTheTTL() {
        var machine = Machine(cacheTTL: 60, backoff: policy)
        _ = machine.received("v1", body: [1], etag: "\"1\"", now: start)
        do { let result = machine.receivedNotModified(now: at(100)); #expect(result) }
        #expect(machine.snapshot.outcome == .notModified)
        #expect(machine.snapshot.fetchedAt == at(100))
        #expect(machine.snapshot.value == "v1")
        do { let result = machine.decide(.ifStale, now: at(159)); #expect(result == .serve(.fromFreshCache)) }
    }

    @Test func notModifiedWithoutAValueIsRefused() {
        var machine = Machine(cacheTTL: 60, backoff: policy)
        do { let result = machine.receivedNotModified(now: start); #expect(!result) }
        #expect(machine.snapshot.value == nil)
    }

    @Test func aFailureKeepsTheLastGoodValueAndCoolsDown() {
        var machine = Machine(cacheTTL: 10, backoff: Backoff.Policy(initialDelay: 8, maximumDelay: 8, minimumDelay: 8))
        var random = SeededRandomNumberGenerator(seed: 1)
        _ = machine.received("v1", body: [1], etag: nil, now: start)
        let outcome = machine.failed(failure, retryAfter: nil, now: at(20), random: &random)
        #expect(outcome == .fromStaleCache)
        #expect(machine.snapshot.value == "v1")
        #expect(machine.snapshot.lastError == failure)
        #expect(machine.snapshot.nextAttempt == at(28))
        #expect(machine.snapshot.consecutiveFailures == 1)
        // Cooling down: neither refresh nor an auto tick asks, but a forced refresh does.
        do { let result = machine.decide(.ifStale, now: at(27)); #expect(result == .serve(.fromStaleCache)) }
        do { let result = machine.decide(.revalidate, now: at(27)); #expect(result == .serve(.fromStaleCache)) }
        do { let result = machine.decide(.reload, now: at(27)); #expect(result == .fetch(etag: nil)) }
        do { let result = machine.decide(.ifStale, now: at(28)); #expect(result == .fetch(etag: nil)) }
        // Success clears the error and the cool-down.
        _ = machine.received("v2", body: [2], etag: nil, now: at(29))
        #expect(machine.snapshot.lastError == nil)
        #expect(machine.snapshot.nextAttempt == nil)
        #expect(machine.snapshot.consecutiveFailures == 0)
    }

    @Test func aFailureWithoutAValueLeavesNothing() {
        var machine = Machine(cacheTTL: 10, backoff: policy)
        var random = SeededRandomNumberGenerator(seed: 1)
        do {
            let result = machine.failed(failure, retryAfter: nil, now: start, random: &random);
            #expect(result == .noValue)
        }
        do { let result = machine.decide(.ifStale, now: start); #expect(result == .serve(.noValue)) }
        #expect(machine.snapshot.lastError == failure)
    }

    @Test func retryAfterLengthensTheCoolDown() {
        var machine = Machine(cacheTTL: 10, backoff: policy)
        var random = SeededRandomNumberGenerator(seed: 1)
        machine.failed(failure, retryAfter: 600, now: start, random: &random)
        do { let result = machine.decide(.ifStale, now: at(599)); #expect(result == .serve(.noValue)) }
        do { let result = machine.decide(.ifStale, now: at(600)); #expect(result == .fetch(etag: nil)) }
    }

    @Test func aValueFromTheFutureIsNotFresh() {
        var machine = Machine(cacheTTL: 60, backoff: policy)
        machine.loadedFromCache("cached", body: [9], etag: "\"9\"", fetchedAt: at(3600))
        #expect(!machine.isFresh(at: start))
        do { let result = machine.decide(.ifStale, now: start); #expect(result == .fetch(etag: "\"9\"")) }
    }

    @Test func anIdenticalBodyIsNotANewValue() {
        var machine = Machine(cacheTTL: 60, backoff: policy)
        do { let result = machine.received("v1", body: [1, 2], etag: nil, now: start); #expect(result) }
        do { let result = machine.received("v1", body: [1, 2], etag: nil, now: at(100)); #expect(!result) }
        #expect(machine.snapshot.fetchedAt == at(100))
        do { let result = machine.received("v2", body: [1, 3], etag: nil, now: at(200)); #expect(result) }
    }

    @Test func autoRefreshIsDueAnIntervalAfterTheLastConfirmationAndAfterTheCoolDown() {
        var machine = Machine(
            cacheTTL: 60, backoff: Backoff.Policy(initialDelay: 50, maximumDelay: 50, minimumDelay: 50))
        var random = SeededRandomNumberGenerator(seed: 1)
        #expect(machine.nextAutoRefresh(interval: 30, now: start) == start)
        _ = machine.received("v1", body: [1], etag: nil, now: start)
        #expect(machine.nextAutoRefresh(interval: 30, now: at(5)) == at(30))
        machine.failed(failure, retryAfter: nil, now: at(30), random: &random)
        #expect(machine.nextAutoRefresh(interval: 30, now: at(31)) == at(80))
    }

    /// A server that always fails, polled every second for an hour: cooling down keeps the
    /// number of requests near the backoff's schedule, not one per poll.
    @Test(arguments: [1, 2, 3, 42, 1234, 99_999] as [UInt64])
    func failuresCoolDown(seed: UInt64) {
        var machine = Machine(cacheTTL: 60, backoff: policy)
        var random = SeededRandomNumberGenerator(seed: seed)
        var requests: [TimeInterval] = []
        for second in 0..<3600 {
            let now = at(TimeInterval(second))
            if case .fetch = machine.decide(.ifStale, now: now) {
                requests.append(TimeInterval(second))
                machine.failed(failure, retryAfter: nil, now: now, random: &random)
            }
        }
        // Ceilings 5, 10, 20, … 900: about 8 requests to reach the cap, then one per ≤ 900 s.
        #expect(requests.count >= 5)
        #expect(requests.count <= 25)
        #expect(machine.snapshot.consecutiveFailures == requests.count)
        // Every gap is at least the policy's floor.
        for (earlier, later) in zip(requests, requests.dropFirst()) { #expect(later - earlier >= 1) }
    }
}
