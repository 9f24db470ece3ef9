import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

/// `record(_:…, userID:)`: the session is chosen and the event written under one lock.
struct RecordForUserTests {
    @Test func aUsersEventsContinueTheirSessionAndAnotherUserStartsOne() async throws {
        let fixture = try RecorderFixture()
        let first = try #require(fixture.recorder.record("a1", userID: "alice"))
        let second = try #require(fixture.recorder.record("a2", userID: "alice"))
        #expect(first.sessionId == second.sessionId)
        #expect(second.userId == "alice")
        // Without a user id the current session's user is kept.
        let plain = try #require(fixture.recorder.record("a3"))
        #expect(plain.sessionId == first.sessionId)
        // An empty user id is no id either.
        let empty = try #require(fixture.recorder.record("a4", userID: ""))
        #expect(empty.sessionId == first.sessionId)
        #expect(empty.userId == "alice")
        let bob = try #require(
            fixture.recorder.record("b1", properties: ["plan": "pro"], type: .identify, userID: "bob"))
        #expect(bob.sessionId != first.sessionId)
        #expect(bob.userId == "bob")
        #expect(bob.type == .identify)
        let alice = try #require(await fixture.recorder.listSessions(forUserID: "alice").first)
        #expect(alice.endedAt != nil)
        #expect(await fixture.recorder.events(forSessionID: first.sessionId).map(\.name) == ["a1", "a2", "a3", "a4"])
    }

    @Test func aRelaunchResumesTheSameUsersSessionAndEndsAnothers() async throws {
        let fixture = try RecorderFixture()
        let before = try #require(fixture.recorder.record("before", userID: "alice"))
        fixture.clock.advance(by: 60)
        let relaunched = fixture.relaunch()
        let resumed = try #require(relaunched.record("after", userID: "alice"))
        #expect(resumed.sessionId == before.sessionId)

        fixture.clock.advance(by: 60)
        let again = fixture.relaunch()
        let bob = try #require(again.record("hello", userID: "bob"))
        #expect(bob.sessionId != before.sessionId)
        let alice = try #require(await again.listAllSessions().first { $0.id == before.sessionId })
        #expect(alice.endedAt != nil)
    }

    /// Two users recording from many threads at once: every event lands in a session of its own
    /// user (recording the user check and the event as separate steps let them cross).
    @Test func concurrentUsersNeverShareASession() async throws {
        let fixture = try RecorderFixture()
        let recorder = fixture.recorder
        let users = ["alice", "bob", "carol"]
        let recorded = await onOwnThread {
            let events = Locked<[(String, Event)]>([])
            DispatchQueue.concurrentPerform(iterations: 600) { index in
                let user = users[index % users.count]
                if let event = recorder.record("e\(index)", userID: user) {
                    events.withLock { $0.append((user, event)) }
                }
            }
            return events.value
        }
        #expect(recorded.count == 600)
        let sessions = await recorder.listAllSessions()
        let owner = Dictionary(uniqueKeysWithValues: sessions.map { ($0.id, $0.userId) })
        for (user, event) in recorded {
            #expect(event.userId == user)
            #expect(
                owner[event.sessionId] == user,
                "event \(event.name) of \(user) in a session of \(String(describing: owner[event.sessionId]))")
        }
        // What is on disk agrees with what was returned.
        for session in sessions {
            for event in await recorder.events(forSessionID: session.id) {
                #expect(event.userId == session.userId)
            }
        }
    }
}
