// The "Getting started with events" article's samples, as written, inside functions so that the
// compiler checks them on every build; `gettingStartedRuns` runs them in a temporary directory.
import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

private func recordSample(at directory: URL) -> EventRecorder {
    let recorder = EventRecorder(directory: directory)
    recorder.record("app_opened")
    recorder.record("checkout_started", properties: ["items": .int(3), "coupon": .string("SPRING")])
    return recorder
}

private func sessionSample(_ recorder: EventRecorder) async -> EventSession {
    let session = await recorder.startSession(userID: "u-42", metadata: ["plan": .string("pro")])
    recorder.record("profile_viewed")
    await recorder.endSession()
    return session
}

private func readSample(_ recorder: EventRecorder) async -> ([Event], [Event]) {
    let current = await recorder.eventsInCurrentSession()
    let checkouts = recorder.reader.events(matching: EventQuery(name: "checkout_started", userId: "u-42"))
    return (current, checkouts)
}

private final class Counter: EventConsumer {
    let count = Locked(0)
    func eventRecorder(_ recorder: EventRecorder, didRecord event: Event, attachment: (any Sendable)?) {
        count.withLock { $0 += 1 }
    }
}

struct GettingStartedSampleTests {
    @Test func gettingStartedRuns() async throws {
        let directory = try TemporaryDirectory()
        let recorder = recordSample(at: directory.url)
        let counter = Counter()
        recorder.addConsumer(counter)
        let session = await sessionSample(recorder)
        let (current, checkouts) = await readSample(recorder)
        #expect(current.isEmpty)  // the session ended
        #expect(checkouts.isEmpty)  // recorded before u-42 signed in
        #expect(counter.count.withLock { $0 } == 1)
        let file = directory.url.appendingPathComponent("users/u-42/sessions/\(session.id.uuidString)/events.jsonl")
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains("\"profile_viewed\"") == true)
        let anonymous = recorder.reader.events(matching: EventQuery(name: "checkout_started"))
        #expect(anonymous.map { $0.properties["items"] } == [.int(3)])
    }
}
