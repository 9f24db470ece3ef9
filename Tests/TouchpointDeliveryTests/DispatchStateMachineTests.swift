import Foundation
import Testing
import TouchpointCore

@testable import TouchpointDelivery

/// The dispatcher's rules, tested on the plain state machine: no files, no network, no clock.
struct DispatchStateMachineTests {
    typealias Machine = DispatchStateMachine

    let start = Date(timeIntervalSince1970: 1_767_225_600)
    let policy = Backoff.Policy(initialDelay: 1, multiplier: 2, maximumDelay: 60, minimumDelay: 0.5)
    let session = UUID()

    func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }

    func machine(
        interval: TimeInterval = 0, saved: DeliveryStateFile.Contents? = nil, requestsPerMinute: Double? = nil,
        burst: Int = 10, compression: Bool = true, limits: BatchLimits = .segment
    ) -> Machine {
        Machine(
            saved: saved, interval: interval, limits: limits, policy: policy, requestsPerMinute: requestsPerMinute,
            burst: burst, compression: compression, seed: 7, now: start)
    }

    /// A batch of `count` events read from `from`, ending `count × 100` bytes later.
    func batch(from: DeliveryCursor, count: Int, reachedEnd: Bool = false) -> OutboxBatch {
        var batch = OutboxBatch(start: from)
        batch.messageIds = (0..<count).map { _ in UUID() }
        batch.messages = Array(repeating: UInt8(ascii: "x"), count: count)
        batch.end = DeliveryCursor(
            journalOffset: from.journalOffset, sessionId: session, eventOffset: from.eventOffset + Int64(count * 100))
        batch.reachedEnd = reachedEnd
        return batch
    }

    func emptyRead(at cursor: DeliveryCursor) -> OutboxBatch {
        var batch = OutboxBatch(start: cursor)
        batch.reachedEnd = true
        return batch
    }

    func expectRead(_ machine: inout Machine, _ now: Date, sourceLocation: SourceLocation = #_sourceLocation) -> Machine
        .ReadOrder?
    {
        guard case .read(let order) = machine.nextAction(now: now) else {
            Issue.record("expected a read", sourceLocation: sourceLocation)
            return nil
        }
        return order
    }

    func expectSend(_ machine: inout Machine, _ now: Date, sourceLocation: SourceLocation = #_sourceLocation) -> Machine
        .SendOrder?
    {
        let action = machine.nextAction(now: now)
        guard case .send(let order) = action else {
            Issue.record("expected a send, got \(action)", sourceLocation: sourceLocation)
            return nil
        }
        return order
    }

    /// Reads a batch of `count` and sends it: the order to answer.
    func readAndSend(_ machine: inout Machine, count: Int, now: Date) -> Machine.SendOrder? {
        guard let read = expectRead(&machine, now) else { return nil }
        _ = machine.readFinished(batch(from: read.from, count: count), token: read.token)
        return expectSend(&machine, now)
    }

    // MARK: Acknowledgement and the cursor

    @Test func anAcknowledgedBatchMovesTheCursorAndIsPersisted() throws {
        var machine = machine()
        let order = try #require(readAndSend(&machine, count: 3, now: start))
        #expect(order.attempt == 1)
        let result1 = machine.nextAction(now: start)
        #expect(result1 == .wait(until: nil, reason: .busy))
        let effects = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: order.token, now: start)
        #expect(effects.persist)
        #expect(machine.cursor == order.batch.end)
        #expect(machine.persistentState.cursor == order.batch.end)
        #expect(machine.statistics.deliveredEvents == 3)
        #expect(effects.notes == [.delivered(count: 3, attempt: 1)])
    }

    @Test func onlyOneUploadIsInFlightAndLateAnswersAreIgnored() throws {
        var machine = machine()
        let order = try #require(readAndSend(&machine, count: 2, now: start))
        _ = machine.newData()
        let result2 = machine.nextAction(now: start)
        #expect(result2 == .wait(until: nil, reason: .busy))
        // An answer with another token changes nothing.
        let stray = machine.uploadFinished(
            .accepted(rejected: []), compressed: false, token: order.token + 99, now: start)
        #expect(stray == Machine.Effects())
        #expect(machine.cursor == .start)
        let result3 = machine.nextAction(now: start)
        #expect(result3 == .wait(until: nil, reason: .busy))
    }

    @Test func rejectedMessagesInA200AreCountedAndNamed() throws {
        var machine = machine()
        let order = try #require(readAndSend(&machine, count: 4, now: start))
        let effects = machine.uploadFinished(
            .accepted(rejected: [.init(index: 2, reason: "bad"), .init(index: 9, reason: "out of range")]),
            compressed: false, token: order.token, now: start)
        #expect(machine.statistics.deliveredEvents == 3)
        #expect(machine.statistics.rejectedEvents == 1)
        #expect(effects.notes.contains(.rejectedByCollector(messageIds: [order.batch.messageIds[2]], reasons: ["bad"])))
    }

    @Test func aRepeatedRejectedIndexCountsOnce() throws {
        var machine = machine()
        let order = try #require(readAndSend(&machine, count: 2, now: start))
        _ = machine.uploadFinished(
            .accepted(rejected: [
                .init(index: 1, reason: "bad"), .init(index: 1, reason: "bad"), .init(index: 1, reason: "bad"),
            ]),
            compressed: false, token: order.token, now: start)
        #expect(machine.statistics.deliveredEvents == 1)
        #expect(machine.statistics.rejectedEvents == 1)
    }

    @Test func aReadThatStartedOverRewindsTheSavedCursor() throws {
        var machine = machine()
        let order = try #require(readAndSend(&machine, count: 3, now: start))
        _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: order.token, now: start)
        #expect(machine.cursor != .start)
        _ = machine.newData()
        // The journal was replaced: the reader went back to the start of the log.
        let read = try #require(expectRead(&machine, start))
        var restarted = batch(from: .start, count: 0)
        restarted.end = .start
        let effects = machine.readFinished(restarted, token: read.token)
        #expect(machine.cursor == .start)
        #expect(machine.persistentState.cursor == .start)
        #expect(effects.persist)
    }

    // MARK: Transient failures

    @Test(arguments: [
        UploadResult.failed(reason: "500", retryAfter: nil, network: false),
        .failed(reason: "503", retryAfter: nil, network: false),
        .failed(reason: "408", retryAfter: nil, network: false),
        .failed(reason: "reset", retryAfter: nil, network: true),
    ])
    func aTransientFailureKeepsTheBatchAndPausesEverything(result: UploadResult) throws {
        var machine = machine()
        let order = try #require(readAndSend(&machine, count: 5, now: start))
        let effects = machine.uploadFinished(result, compressed: false, token: order.token, now: start)
        #expect(effects.persist)
        #expect(machine.cursor == .start)
        #expect(machine.backoff.failures == 1)
        let next = try #require(machine.backoff.nextAttempt)
        #expect(policy.delayRange(afterFailures: 1).contains(next.timeIntervalSince(start)))
        // New events do not bypass the pause.
        _ = machine.newData()
        let result4 = machine.nextAction(now: start)
        #expect(result4 == .wait(until: next, reason: .backoff))
        // The same batch goes again once the backoff allows it.
        let retry = try #require(expectSend(&machine, next))
        #expect(retry.batch == order.batch)
        #expect(retry.attempt == 2)
        _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: retry.token, now: next)
        #expect(machine.backoff.failures == 0)
        #expect(machine.backoff.nextAttempt == nil)
        #expect(machine.cursor == order.batch.end)
    }

    @Test func retryAfterIsHonoured() throws {
        var machine = machine()
        let order = try #require(readAndSend(&machine, count: 1, now: start))
        _ = machine.uploadFinished(
            .failed(reason: "429", retryAfter: 30, network: false), compressed: false, token: order.token, now: start)
        #expect(machine.backoff.nextAttempt == at(30))
        let result5 = machine.nextAction(now: at(29.9))
        #expect(result5 == .wait(until: at(30), reason: .backoff))
        #expect(expectSend(&machine, at(30)) != nil)
    }

    @Test func delaysGrowAndStayCappedOverAStreakOfFailures() throws {
        var machine = machine()
        var now = start
        var order = try #require(readAndSend(&machine, count: 1, now: now))
        for failure in 1...12 {
            _ = machine.uploadFinished(
                .failed(reason: "503", retryAfter: nil, network: false), compressed: false, token: order.token, now: now
            )
            let delay = try #require(machine.backoff.nextAttempt).timeIntervalSince(now)
            #expect(policy.delayRange(afterFailures: failure).contains(delay))
            now = try #require(machine.backoff.nextAttempt)
            order = try #require(expectSend(&machine, now))
        }
        #expect(machine.statistics.failedRequests == 12)
        #expect(machine.statistics.requests == 13)
    }

    // MARK: Refusals

    @Test(arguments: [400, 404, 422])
    func anotherClientErrorDropsThatBatchOnly(status: Int) throws {
        var machine = machine(compression: false)
        let order = try #require(readAndSend(&machine, count: 3, now: start))
        let effects = machine.uploadFinished(
            .refused(status: status, reason: "answered \(status)"), compressed: false, token: order.token, now: start)
        #expect(machine.cursor == order.batch.end)
        #expect(machine.statistics.droppedEvents == 3)
        #expect(
            effects.notes == [
                .dropped(
                    count: 3, first: order.batch.messageIds.first, last: order.batch.messageIds.last,
                    reason: "answered \(status)")
            ])
        // The next batch is read and sent normally.
        let next = try #require(readAndSend(&machine, count: 2, now: start))
        #expect(next.batch.start == order.batch.end)
    }

    /// A refused write key blames no batch: 401 and 403 are retried like an unavailable collector,
    /// other client errors drop the batch.
    @Test(arguments: [(401, false), (403, false), (400, true), (404, true), (422, true), (408, false)])
    func credentialsAnswersAreRetriedNotDropped(status: Int, drops: Bool) {
        let url = URL(string: "http://127.0.0.1:1/v1/batch")!
        let result = UploadResult.classify(
            TransportResponse(status: status, body: Array(#"{"error":"x"}"#.utf8), url: url), now: start)
        switch result {
        case .refused: #expect(drops)
        case .failed(let reason, _, let network):
            #expect(!drops)
            #expect(!network)
            #expect(reason.contains("answered \(status)"))
            if status == 401 || status == 403 { #expect(reason.contains("write key was refused")) }
        default: Issue.record("unexpected \(result)")
        }
    }

    @Test func aGzippedRequestAnswered400GoesOnceMoreUncompressed() throws {
        var machine = machine()
        let order = try #require(readAndSend(&machine, count: 3, now: start))
        #expect(order.mayCompress)
        let effects = machine.uploadFinished(
            .refused(status: 400, reason: "no gzip here"), compressed: true, token: order.token, now: start)
        #expect(effects.notes == [.compressionRefused(reason: "no gzip here")])
        #expect(machine.cursor == .start)
        let plain = try #require(expectSend(&machine, start))
        #expect(!plain.mayCompress)
        #expect(plain.batch == order.batch)
        _ = machine.uploadFinished(
            .refused(status: 400, reason: "still bad"), compressed: false, token: plain.token, now: start)
        #expect(machine.cursor == order.batch.end)
        #expect(machine.statistics.droppedEvents == 3)
        #expect(!machine.compressionAllowed)
    }

    @Test func a413SplitsTheBatchInHalvesDownToOneEventWhichIsDropped() throws {
        var machine = machine()
        var order = try #require(readAndSend(&machine, count: 8, now: start))
        let end = order.batch.end
        var sizes: [Int] = []
        // Every batch is too large: 8 → 4 → 2 → 1, and the single event is dropped.
        for _ in 0..<4 {
            sizes.append(order.batch.count)
            _ = machine.uploadFinished(.tooLarge(reason: "413"), compressed: false, token: order.token, now: start)
            if order.batch.count == 1 { break }
            let read = try #require(expectRead(&machine, start))
            #expect(read.from == .start)
            #expect(read.limits.maximumEvents == max(1, order.batch.count / 2))
            _ = machine.readFinished(batch(from: read.from, count: read.limits.maximumEvents), token: read.token)
            order = try #require(expectSend(&machine, start))
        }
        #expect(sizes == [8, 4, 2, 1])
        #expect(machine.statistics.droppedEvents == 1)
        #expect(machine.backoff.failures == 0)
        // The rest of the original batch is read in small batches until its end, then full size again.
        let read = try #require(expectRead(&machine, start))
        #expect(read.limits.maximumEvents == 1)
        _ = machine.readFinished(batch(from: read.from, count: 1), token: read.token)
        let one = try #require(expectSend(&machine, start))
        _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: one.token, now: start)
        #expect(machine.cursor.eventOffset == 200)
        #expect(!machine.cursor.hasReached(end))
    }

    @Test func afterASplitTheFullLimitReturnsPastTheRejectedBatch() throws {
        var machine = machine()
        let order = try #require(readAndSend(&machine, count: 4, now: start))
        _ = machine.uploadFinished(.tooLarge(reason: "413"), compressed: false, token: order.token, now: start)
        for _ in 0..<2 {
            let read = try #require(expectRead(&machine, start))
            #expect(read.limits.maximumEvents == 2)
            _ = machine.readFinished(batch(from: read.from, count: 2), token: read.token)
            let half = try #require(expectSend(&machine, start))
            _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: half.token, now: start)
        }
        #expect(machine.cursor == order.batch.end)
        let read = try #require(expectRead(&machine, start))
        #expect(read.limits.maximumEvents == BatchLimits.segmentMaximumEvents)
    }

    // MARK: Interval

    @Test func immediateDispatchReadsWheneverEventsArrive() throws {
        var machine = machine(interval: 0)
        let read = try #require(expectRead(&machine, start))
        _ = machine.readFinished(emptyRead(at: read.from), token: read.token)
        let result6 = machine.nextAction(now: start)
        #expect(result6 == .wait(until: nil, reason: .nothingPending))
        let result7 = machine.newData()  // wakes the loop
        #expect(result7)
        let result8 = machine.newData()  // once is enough
        #expect(!result8)
        #expect(expectRead(&machine, start) != nil)
    }

    @Test func anEventRecordedDuringAnEmptyReadIsNotMissed() throws {
        var machine = machine(interval: 0)
        let read = try #require(expectRead(&machine, start))
        _ = machine.newData()  // recorded after the read looked at the file
        _ = machine.readFinished(emptyRead(at: read.from), token: read.token)
        #expect(expectRead(&machine, start) != nil)
    }

    @Test func manualDispatchSendsNothingUntilAsked() throws {
        var machine = machine(interval: -1)
        _ = machine.newData()
        let result9 = machine.newData()
        #expect(!result9)
        let result10 = machine.nextAction(now: at(3600))
        #expect(result10 == .wait(until: nil, reason: .manual))
        machine.flushRequested()  // going to the background does not send in manual mode
        let result11 = machine.nextAction(now: at(3600))
        #expect(result11 == .wait(until: nil, reason: .manual))
        let target = DeliveryCursor(journalOffset: 0, sessionId: session, eventOffset: 300)
        _ = machine.addWaiter(1, target: target, failFast: false, now: start)
        let order = try #require(readAndSend(&machine, count: 3, now: start))
        let effects = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: order.token, now: start)
        #expect(effects.completed == [.init(waiter: 1, report: DispatchReport(deliveredEvents: 3))])
        let result12 = machine.nextAction(now: start)
        #expect(result12 == .wait(until: nil, reason: .manual))
    }

    @Test func timerDispatchDrainsEverythingPendingAtEachTick() throws {
        var machine = machine(interval: 60)
        _ = machine.newData()
        let result13 = machine.nextAction(now: at(59))
        #expect(result13 == .wait(until: at(60), reason: .timer))
        // At the tick: batches until the log is caught up.
        var read = try #require(expectRead(&machine, at(60)))
        for _ in 0..<2 {
            _ = machine.readFinished(batch(from: read.from, count: 2), token: read.token)
            let order = try #require(expectSend(&machine, at(60)))
            _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: order.token, now: at(60))
            read = try #require(expectRead(&machine, at(60)))
        }
        _ = machine.readFinished(emptyRead(at: read.from), token: read.token)
        let result14 = machine.nextAction(now: at(61))
        #expect(result14 == .wait(until: at(120), reason: .timer))
        #expect(machine.statistics.deliveredEvents == 4)
        // The next tick reads again.
        #expect(expectRead(&machine, at(120)) != nil)
    }

    @Test func goingToTheBackgroundFlushesInTimerMode() throws {
        var machine = machine(interval: 3600)
        let result15 = machine.nextAction(now: at(1))
        #expect(result15 == .wait(until: at(3600), reason: .timer))
        machine.flushRequested()
        #expect(expectRead(&machine, at(1)) != nil)
    }

    @Test func changingTheIntervalRestartsTheTimer() {
        var machine = machine(interval: -1)
        machine.setInterval(10, now: at(100))
        let result16 = machine.nextAction(now: at(105))
        #expect(result16 == .wait(until: at(110), reason: .timer))
        machine.setInterval(0, now: at(105))
        guard case .read = machine.nextAction(now: at(105)) else {
            Issue.record("an interval of 0 reads at once")
            return
        }
    }

    // MARK: dispatch()

    @Test func aWaiterCompletesWhenTheCursorReachesItsTarget() throws {
        var machine = machine(interval: -1)
        let target = DeliveryCursor(journalOffset: 0, sessionId: session, eventOffset: 400)
        let result17 = machine.addWaiter(1, target: target, failFast: false, now: start)
        #expect(result17 == Machine.Effects())
        var order = try #require(readAndSend(&machine, count: 2, now: start))
        var effects = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: order.token, now: start)
        #expect(effects.completed.isEmpty)
        order = try #require(readAndSend(&machine, count: 2, now: start))
        effects = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: order.token, now: start)
        #expect(effects.completed == [.init(waiter: 1, report: DispatchReport(deliveredEvents: 4))])
        #expect(machine.waiterCount == 0)
    }

    @Test func anEmptyReadCompletesWaitersThatCameBeforeIt() throws {
        var machine = machine(interval: -1)
        // A target past the readable lines (a torn last line) is still completed once a read finds nothing more.
        let target = DeliveryCursor(journalOffset: 0, sessionId: session, eventOffset: 10_000)
        _ = machine.addWaiter(1, target: target, failFast: false, now: start)
        let read = try #require(expectRead(&machine, start))
        _ = machine.addWaiter(2, target: target, failFast: false, now: start)  // after the read began
        let effects = machine.readFinished(emptyRead(at: read.from), token: read.token)
        #expect(effects.completed.map(\.waiter) == [1])
        #expect(machine.waiterCount == 1)
    }

    @Test func aWaiterWithNothingPendingCompletesAtOnce() {
        var machine = machine()
        let effects = machine.addWaiter(1, target: .start, failFast: true, now: start)
        #expect(effects.completed == [.init(waiter: 1, report: DispatchReport())])
    }

    @Test func failFastWaitersFailAtTheFirstFailureAndWhileBackingOff() throws {
        var machine = machine()
        let target = DeliveryCursor(journalOffset: 0, sessionId: session, eventOffset: 300)
        _ = machine.addWaiter(1, target: target, failFast: true, now: start)
        _ = machine.addWaiter(2, target: target, failFast: false, now: start)
        let order = try #require(readAndSend(&machine, count: 3, now: start))
        let effects = machine.uploadFinished(
            .failed(reason: "503 answered", retryAfter: 10, network: false), compressed: false, token: order.token,
            now: start)
        #expect(effects.failed.map(\.waiter) == [1])
        #expect(effects.failed.first?.error.code == .collectorUnavailable)
        #expect(effects.failed.first?.error.reason.contains("503 answered") == true)
        #expect(machine.waiterCount == 1)
        let refused = machine.addWaiter(3, target: target, failFast: true, now: at(5))
        #expect(refused.failed.first?.error.code == .collectorUnavailable)
    }

    // MARK: Enable / disable

    @Test func disablingStopsSendingAndFailsWaitersAndIsPersisted() throws {
        var machine = machine()
        let target = DeliveryCursor(journalOffset: 0, sessionId: session, eventOffset: 300)
        _ = machine.addWaiter(1, target: target, failFast: false, now: start)
        let effects = machine.setEnabled(false, now: start)
        #expect(effects.persist)
        #expect(effects.failed.map(\.error.code) == [.disabled])
        #expect(!machine.persistentState.isEnabled)
        _ = machine.newData()
        let result18 = machine.nextAction(now: start)
        #expect(result18 == .wait(until: nil, reason: .disabled))
        let result19 = machine.addWaiter(2, target: target, failFast: false, now: start)
        #expect(result19.failed.first?.error.code == .disabled)
        _ = machine.setEnabled(true, now: start)
        #expect(expectRead(&machine, start) != nil)
    }

    @Test func anUploadInFlightWhenDisabledStillMovesTheCursor() throws {
        var machine = machine()
        let order = try #require(readAndSend(&machine, count: 2, now: start))
        _ = machine.setEnabled(false, now: start)
        _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: order.token, now: start)
        #expect(machine.cursor == order.batch.end)
        let result20 = machine.nextAction(now: start)
        #expect(result20 == .wait(until: nil, reason: .disabled))
    }

    // MARK: Consent

    @Test func optingOutStopsSendingAndFailsWaitersWithoutPersistingAnything() throws {
        var machine = machine()
        let target = DeliveryCursor(journalOffset: 0, sessionId: session, eventOffset: 300)
        _ = machine.addWaiter(1, target: target, failFast: false, now: start)
        let effects = machine.setOptedOut(true, now: start)
        #expect(!effects.persist, "the recorder keeps the choice")
        #expect(effects.failed.map(\.waiter) == [1])
        #expect(effects.failed.map(\.error.code) == [.optedOut])
        #expect(machine.waiterCount == 0)
        #expect(machine.nextAction(now: start) == .wait(until: nil, reason: .optedOut))
        #expect(machine.addWaiter(2, target: target, failFast: false, now: start).failed.first?.error.code == .optedOut)
        #expect(machine.setOptedOut(true, now: start).failed.isEmpty)
        _ = machine.setOptedOut(false, now: start)
        #expect(expectRead(&machine, start) != nil, "what was kept is sent after opting in")
    }

    // MARK: Reachability

    @Test func offlinePausesWithoutCountingFailures() throws {
        var machine = machine()
        let read = try #require(expectRead(&machine, start))
        _ = machine.readFinished(batch(from: read.from, count: 1), token: read.token)
        _ = machine.setOnline(false, now: start)
        let result21 = machine.nextAction(now: start)
        #expect(result21 == .wait(until: nil, reason: .offline))
        #expect(machine.backoff.failures == 0)
        _ = machine.setOnline(true, now: start)
        #expect(expectSend(&machine, start) != nil)
    }

    @Test func comingBackOnlineCutsABackoffCausedByNetworkErrors() throws {
        var machine = machine()
        let order = try #require(readAndSend(&machine, count: 1, now: start))
        _ = machine.uploadFinished(
            .failed(reason: "connection refused", retryAfter: nil, network: true), compressed: false,
            token: order.token, now: start)
        #expect(machine.backoff.nextAttempt != nil)
        // "Online" while already online (a monitor's first report after a launch) is not news.
        let first = machine.setOnline(true, now: at(0.01))
        #expect(first.notes.isEmpty)
        let still = machine.nextAction(now: at(0.01))
        #expect(still == .wait(until: machine.backoff.nextAttempt, reason: .backoff))
        _ = machine.setOnline(false, now: at(0.01))
        let effects = machine.setOnline(true, now: at(0.01))
        #expect(effects.notes == [.backOnline])
        #expect(machine.backoff.failures == 1)  // the streak is remembered for the next delay
        #expect(expectSend(&machine, at(0.01)) != nil)
    }

    @Test func comingBackOnlineDoesNotCutAServersRetryAfter() throws {
        var machine = machine()
        let order = try #require(readAndSend(&machine, count: 1, now: start))
        _ = machine.uploadFinished(
            .failed(reason: "429", retryAfter: 30, network: false), compressed: false, token: order.token, now: start)
        _ = machine.setOnline(false, now: at(1))
        let result22 = machine.setOnline(true, now: at(1))
        #expect(result22.notes.isEmpty)
        let result23 = machine.nextAction(now: at(1))
        #expect(result23 == .wait(until: at(30), reason: .backoff))
    }

    // MARK: Rate limiting

    @Test func theRequestCeilingPacesRequestsAfterTheBurst() throws {
        var machine = machine(requestsPerMinute: 6, burst: 2)  // one request every 10 s after 2
        var now = start
        var sentAt: [TimeInterval] = []
        for _ in 0..<5 {
            let read = try #require(expectRead(&machine, now))
            _ = machine.readFinished(batch(from: read.from, count: 1), token: read.token)
            var action = machine.nextAction(now: now)
            if case .wait(let until?, .rateLimit) = action {
                now = until
                action = machine.nextAction(now: now)
            }
            guard case .send(let order) = action else {
                Issue.record("expected a send, got \(action)")
                return
            }
            sentAt.append(now.timeIntervalSince(start))
            _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: order.token, now: now)
        }
        #expect(sentAt.count == 5)
        for (index, expected) in [0.0, 0, 10, 20, 30].enumerated() {
            #expect(abs(sentAt[index] - expected) < 0.001)
        }
    }

    @Test func retriesCountAgainstTheCeiling() throws {
        var machine = machine(requestsPerMinute: 60, burst: 1)
        let order = try #require(readAndSend(&machine, count: 1, now: start))
        _ = machine.uploadFinished(
            .failed(reason: "500", retryAfter: 0, network: false), compressed: false, token: order.token, now: start)
        let next = try #require(machine.backoff.nextAttempt)
        let action = machine.nextAction(now: next)
        guard case .wait(let until?, .rateLimit) = action else {
            Issue.record("expected the rate limit to hold the retry, got \(action)")
            return
        }
        #expect(abs(until.timeIntervalSince(start) - 1) < 0.001)
    }

    // MARK: Persistence and clear

    @Test func aRestoredRetryStateKeepsBackingOff() {
        var saved = DeliveryStateFile.Contents()
        saved.cursor = DeliveryCursor(journalOffset: 120, sessionId: session, eventOffset: 900)
        saved.failures = 4
        saved.nextAttempt = at(20)
        var machine = machine(saved: saved)
        #expect(machine.cursor == saved.cursor)
        #expect(machine.backoff.failures == 4)
        guard case .read(let order) = machine.nextAction(now: start) else {
            Issue.record("expected a read")
            return
        }
        #expect(order.from == saved.cursor)
        _ = machine.readFinished(batch(from: order.from, count: 1), token: order.token)
        let result24 = machine.nextAction(now: at(1))
        #expect(result24 == .wait(until: at(20), reason: .backoff))
        #expect(machine.persistentState == saved)
    }

    @Test func aNextAttemptFarInTheFutureIsClampedToThePolicy() {
        var saved = DeliveryStateFile.Contents()
        saved.failures = 2
        saved.nextAttempt = at(86_400 * 30)
        let machine = machine(saved: saved)
        #expect(machine.backoff.nextAttempt == at(max(policy.maximumDelay, policy.maximumRetryAfter)))
    }

    @Test func clearingTheLogResetsTheCursorAndIgnoresTheUploadInFlight() throws {
        var machine = machine()
        let target = DeliveryCursor(journalOffset: 0, sessionId: session, eventOffset: 300)
        _ = machine.addWaiter(1, target: target, failFast: false, now: start)
        let order = try #require(readAndSend(&machine, count: 3, now: start))
        let effects = machine.cleared()
        #expect(effects.persist)
        #expect(effects.completed.map(\.waiter) == [1])
        _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: order.token, now: start)
        #expect(machine.cursor == .start)
        let read = try #require(expectRead(&machine, start))
        #expect(read.from == .start)
    }

    @Test func aClearDuringAnUploadDiscardsItsAnswerAndStartsNothingBeforeIt() throws {
        var machine = machine()
        let order = try #require(readAndSend(&machine, count: 3, now: start))
        _ = machine.cleared()
        #expect(machine.phase == .discarding(token: order.token))
        #expect(!machine.hasBatchInFlight)
        // Until the stale answer arrives nothing new goes out (the old upload still holds the
        // connection), and an answer with another token does not end the wait.
        #expect(machine.nextAction(now: start) == .wait(until: nil, reason: .busy))
        _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: order.token + 1, now: start)
        #expect(machine.phase == .discarding(token: order.token))
        let stale = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: order.token, now: start)
        #expect(stale == Machine.Effects())
        #expect(machine.phase == .idle)
        #expect(machine.statistics.deliveredEvents == 0)
    }

    @Test func aClearDuringAReadDiscardsTheBatchItFinds() throws {
        var machine = machine()
        let read = try #require(expectRead(&machine, start))
        #expect(machine.phase == .reading(.init(token: read.token, sequence: 1, signals: 0)))
        _ = machine.cleared()
        let effects = machine.readFinished(batch(from: read.from, count: 2), token: read.token)
        #expect(effects == Machine.Effects())
        #expect(machine.phase == .idle)
        #expect(try #require(expectRead(&machine, start)).from == .start)
    }

    @Test func eachAnswerLeavesThePhaseItDocuments() throws {
        var machine = machine()
        let first = try #require(readAndSend(&machine, count: 2, now: start))
        guard case .uploading(let flight, let token) = machine.phase else {
            Issue.record("expected an upload, got \(machine.phase)")
            return
        }
        #expect(token == first.token)
        #expect(flight.attempts == 1)
        // A failure holds the batch for its next attempt, with the attempt counted.
        _ = machine.uploadFinished(
            .failed(reason: "503", retryAfter: nil, network: false), compressed: false, token: token, now: start)
        #expect(machine.phase == .holding(Machine.InFlight(batch: first.batch, attempts: 1)))
        let retryAt = try #require(machine.backoff.nextAttempt)
        let retry = try #require(expectSend(&machine, retryAt))
        #expect(retry.attempt == 2)
        // A cancelled upload holds it too; a gzip refusal holds it marked plain.
        _ = machine.uploadFinished(.cancelled, compressed: false, token: retry.token, now: retryAt)
        #expect(machine.phase == .holding(Machine.InFlight(batch: first.batch, attempts: 2)))
        let third = try #require(expectSend(&machine, retryAt))
        _ = machine.uploadFinished(
            .refused(status: 415, reason: "gzip"), compressed: true, token: third.token, now: retryAt)
        #expect(machine.phase == .holding(Machine.InFlight(batch: first.batch, attempts: 3, plainOnly: true)))
        // An acknowledgement settles it.
        let fourth = try #require(expectSend(&machine, retryAt))
        _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: fourth.token, now: retryAt)
        #expect(machine.phase == .idle)
        #expect(machine.cursor == first.batch.end)
    }

    @Test func oversizedEventsAreDroppedAndTheCursorMovesPastThem() throws {
        var machine = machine()
        let read = try #require(expectRead(&machine, start))
        var result = emptyRead(at: read.from)
        let id = UUID()
        result.oversized = [.init(messageId: id, bytes: 40_000)]
        result.end = DeliveryCursor(journalOffset: 0, sessionId: session, eventOffset: 40_100)
        let effects = machine.readFinished(result, token: read.token)
        #expect(effects.persist)
        #expect(
            effects.notes == [
                .droppedOversized(messageId: id, bytes: 40_000, limit: BatchLimits.segmentMaximumEventBytes)
            ])
        #expect(machine.cursor == result.end)
        #expect(machine.statistics.droppedEvents == 1)
    }

    // MARK: Reading ahead

    @Test func theNextBatchIsReadAheadAndSentWhenTheFirstIsAcknowledged() throws {
        var machine = machine()
        let none = machine.prefetchOrder()  // nothing in flight
        #expect(none == nil)
        let first = try #require(readAndSend(&machine, count: 3, now: start))
        let order = machine.prefetchOrder()
        let ahead = try #require(order)
        #expect(ahead.from == first.batch.end)
        let another = machine.prefetchOrder()  // one read ahead at a time
        #expect(another == nil)
        let next = batch(from: ahead.from, count: 2)
        machine.prefetchFinished(next, token: ahead.token)
        _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: first.token, now: start)
        let second = try #require(expectSend(&machine, start))  // no read in between
        #expect(second.batch == next)
        #expect(second.attempt == 1)
    }

    @Test func aBatchReadAheadWaitsOutTheRetriesOfTheOneInFlight() throws {
        var machine = machine()
        let first = try #require(readAndSend(&machine, count: 3, now: start))
        let order = machine.prefetchOrder()
        let ahead = try #require(order)
        let next = batch(from: ahead.from, count: 2)
        machine.prefetchFinished(next, token: ahead.token)
        _ = machine.uploadFinished(
            .failed(reason: "503", retryAfter: nil, network: false), compressed: false, token: first.token, now: start)
        let retryAt = try #require(machine.backoff.nextAttempt)
        let retry = try #require(expectSend(&machine, retryAt))
        #expect(retry.batch == first.batch)
        let again = machine.prefetchOrder()  // already read
        #expect(again == nil)
        _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: retry.token, now: retryAt)
        #expect(try #require(expectSend(&machine, retryAt)).batch == next)
    }

    @Test func aSplitDiscardsTheBatchReadAhead() throws {
        var machine = machine()
        let first = try #require(readAndSend(&machine, count: 4, now: start))
        let order = machine.prefetchOrder()
        let ahead = try #require(order)
        machine.prefetchFinished(batch(from: ahead.from, count: 4), token: ahead.token)
        _ = machine.uploadFinished(.tooLarge(reason: "413"), compressed: false, token: first.token, now: start)
        let read = try #require(expectRead(&machine, start))
        #expect(read.from == .start)
        #expect(read.limits.maximumEvents == 2)
    }

    @Test func anEmptyReadAheadIsNotKept() throws {
        var machine = machine()
        let first = try #require(readAndSend(&machine, count: 1, now: start))
        let order = machine.prefetchOrder()
        let ahead = try #require(order)
        machine.prefetchFinished(emptyRead(at: ahead.from), token: ahead.token)
        _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: first.token, now: start)
        let read = try #require(expectRead(&machine, start))
        #expect(read.from == first.batch.end)
    }

    @Test func clearingTheLogDiscardsTheBatchReadAhead() throws {
        var machine = machine()
        let first = try #require(readAndSend(&machine, count: 1, now: start))
        let order = machine.prefetchOrder()
        let ahead = try #require(order)
        _ = machine.cleared()
        machine.prefetchFinished(batch(from: ahead.from, count: 2), token: ahead.token)
        _ = machine.uploadFinished(.accepted(rejected: []), compressed: false, token: first.token, now: start)
        let read = try #require(expectRead(&machine, start))
        #expect(read.from == .start)
    }
}
