import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

struct ConsumerTests {
    @Test func consumersSeeEveryEventInLogOrderWithAttachments() async throws {
        let fixture = try RecorderFixture()
        let consumer = RecordingConsumer()
        fixture.recorder.addConsumer(consumer)
        await fixture.recorder.startSession(userID: "u1")
        fixture.recorder.record("a", attachment: "typed-a")
        fixture.recorder.record("b")
        await fixture.recorder.endSession()
        #expect(consumer.received.value == ["start:u1", "a", "b", "end:u1"])
        #expect(consumer.attachments.value == ["typed-a"])
        fixture.recorder.removeConsumer(consumer)
        fixture.recorder.record("c")
        #expect(consumer.received.value.count == 4)
    }

    @Test func aConsumerThatRecordsDoesNotDeadlockAndItsEventFollows() async throws {
        let fixture = try RecorderFixture()
        let consumer = RecordingConsumer { recorder, event in
            if event.name == "purchase" { recorder.record("follow_up", properties: ["of": .string(event.messageId)]) }
        }
        fixture.recorder.addConsumer(consumer)
        fixture.recorder.record("purchase")
        fixture.recorder.record("other")
        #expect(await fixture.recorder.eventsInCurrentSession().map(\.name) == ["purchase", "follow_up", "other"])
        #expect(consumer.received.value == ["start:anon", "purchase", "follow_up", "other"])
    }

    @Test func aConsumerThatRecordsOnEveryEventIsCutOff() async throws {
        let fixture = try RecorderFixture()
        fixture.recorder.addConsumer(RecordingConsumer { recorder, _ in recorder.record("echo") })
        fixture.recorder.record("start")
        #expect(fixture.recorder.statistics.droppedReentrant > 0)
        #expect(await fixture.recorder.eventsInCurrentSession().count == 1 + 64)
    }

    @Test func theAsyncStreamDeliversEventsInOrder() async throws {
        let fixture = try RecorderFixture()
        let stream = fixture.recorder.eventStream()
        let reader = Task {
            var names: [String] = []
            for await event in stream {
                names.append(event.name)
                if names.count == 3 { break }
            }
            return names
        }
        for name in ["x", "y", "z"] { fixture.recorder.record(name) }
        #expect(await reader.value == ["x", "y", "z"])
    }

    @Test func theCombinePublisherDeliversEventsInOrder() async throws {
        let fixture = try RecorderFixture()
        let received = Locked<[String]>([])
        let cancellable = fixture.recorder.eventsPublisher.sink { event in received.withLock { $0.append(event.name) } }
        for index in 0..<100 { fixture.recorder.record("e\(index)") }
        #expect(await eventually { received.value.count == 100 })
        #expect(received.value == (0..<100).map { "e\($0)" })
        cancellable.cancel()
    }
}
