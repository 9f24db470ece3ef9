import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

struct RetentionTests {
    final class Veto: EventConsumer {
        let keep: Set<UUID>
        init(keep: Set<UUID>) { self.keep = keep }
        func eventRecorder(_ recorder: EventRecorder, didRecord event: Event, attachment: (any Sendable)?) {}
        func eventRecorder(_ recorder: EventRecorder, mayDelete session: SessionJournal.Entry) -> Bool {
            !keep.contains(session.sessionId)
        }
    }

    @Test func oldSessionsAreDeletedButNotTheOpenOne() async throws {
        let fixture = try RecorderFixture { $0.retention = RetentionPolicy(maximumAge: 86_400) }
        var ids: [UUID] = []
        for day in 0..<3 {
            ids.append(await fixture.recorder.startSession(userID: "u\(day)").id)
            fixture.recorder.record("e")
            fixture.clock.advance(by: 86_400 * 0.4)
        }
        let report = await fixture.recorder.applyRetention()
        #expect(report.deletedSessions == [ids[0]])
        #expect(await fixture.recorder.listAllSessions().map(\.id) == [ids[1], ids[2]])
        fixture.clock.advance(by: 86_400 * 10)
        let second = await fixture.recorder.applyRetention()
        #expect(second.deletedSessions == [ids[1]], "the open session stays")
    }

    @Test func theOldestSessionsGoFirstPastTheByteLimitUnlessAConsumerNeedsThem() async throws {
        let fixture = try RecorderFixture { $0.retention = RetentionPolicy(maximumTotalBytes: 3_500) }
        var ids: [UUID] = []
        for index in 0..<5 {
            ids.append(await fixture.recorder.startSession(userID: "u\(index)").id)
            fixture.recorder.record("e", properties: ["pad": .string(String(repeating: "x", count: 700))])
            fixture.clock.advance(by: 1)
        }
        fixture.recorder.addConsumer(Veto(keep: [ids[0]]))
        let report = await fixture.recorder.applyRetention()
        #expect(report.keptForConsumers == [ids[0]])
        #expect(report.deletedSessions == [ids[1], ids[2]])
        #expect(report.remainingBytes <= 3_500)
        #expect(await fixture.recorder.listAllSessions().map(\.id) == [ids[0], ids[3], ids[4]])
    }
}
