import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

struct SessionTests {
    @Test func recordWithoutASessionStartsAnAnonymousOne() async throws {
        let fixture = try RecorderFixture()
        #expect(await fixture.recorder.currentSession() == nil)
        let event = try #require(fixture.recorder.record("first"))
        let session = try #require(await fixture.recorder.currentSession())
        #expect(session.userId == nil)
        #expect(event.sessionId == session.id)
        #expect(
            FileManager.default.fileExists(
                atPath: fixture.directory.path + "/users/anon/sessions/\(session.id.uuidString)"))
    }

    @Test func inactivityStartsANewSessionForTheSameUser() async throws {
        let fixture = try RecorderFixture()
        let first = await fixture.recorder.startSession(userID: "u1", metadata: ["plan": "pro"])
        fixture.recorder.record("a")
        fixture.clock.advance(by: 29 * 60)
        fixture.recorder.record("b")
        #expect(await fixture.recorder.currentSession()?.id == first.id)
        fixture.clock.advance(by: 30 * 60 + 1)
        let late = try #require(fixture.recorder.record("c"))
        #expect(late.sessionId != first.id)
        #expect(late.userId == "u1")
        let sessions = await fixture.recorder.listSessions(forUserID: "u1")
        #expect(sessions.count == 2)
        // The old session ended at its last event, not when the timeout was noticed.
        #expect(sessions[0].endedAt == sessions[0].startedAt.addingTimeInterval(29 * 60))
        #expect(sessions[1].metadata == ["plan": "pro"])
    }

    @Test func aRelaunchWithinTheTimeoutContinuesTheSession() async throws {
        let fixture = try RecorderFixture()
        let session = await fixture.recorder.startSession(userID: "u1")
        fixture.recorder.record("before")
        fixture.clock.advance(by: 60)
        let relaunched = fixture.relaunch()
        let event = try #require(relaunched.record("after"))
        #expect(event.sessionId == session.id)
        #expect(event.userId == "u1")
        #expect(await relaunched.eventsInCurrentSession().map(\.name) == ["before", "after"])
    }

    @Test func aRelaunchAfterTheTimeoutEndsTheOldSessionAndKeepsTheUser() async throws {
        let fixture = try RecorderFixture()
        let session = await fixture.recorder.startSession(userID: "u1")
        fixture.recorder.record("before")
        fixture.clock.advance(by: 3600)
        let relaunched = fixture.relaunch()
        let event = try #require(relaunched.record("after"))
        #expect(event.sessionId != session.id)
        #expect(event.userId == "u1")
        let old = try #require(await relaunched.listAllSessions().first { $0.id == session.id })
        #expect(old.endedAt == session.startedAt)
    }

    @Test func endSessionWritesEndedAtAndTheNextEventStartsAnAnonymousSession() async throws {
        let fixture = try RecorderFixture()
        let session = await fixture.recorder.startSession(userID: "u1", metadata: ["plan": "pro"])
        fixture.recorder.record("a")
        fixture.clock.advance(by: 5)
        await fixture.recorder.endSession()
        #expect(await fixture.recorder.currentSession() == nil)
        #expect(await fixture.recorder.eventsInCurrentSession().isEmpty)
        let stored = try #require(await fixture.recorder.listAllSessions().first)
        #expect(stored.endedAt == session.startedAt.addingTimeInterval(5))
        // The seed: "If you call record(...) without starting a session, an anonymous session is
        // created automatically" — after an explicit end too, without the old metadata.
        let next = try #require(fixture.recorder.record("b"))
        #expect(next.sessionId != session.id)
        #expect(next.userId == nil)
        let anonymous = try #require(await fixture.recorder.currentSession())
        #expect(anonymous.userId == nil && anonymous.metadata == nil)
        #expect(
            FileManager.default.fileExists(
                atPath: fixture.directory.path + "/users/anon/sessions/\(anonymous.id.uuidString)/events.jsonl"))
        // An ended session is not resumed after a relaunch.
        await fixture.recorder.endSession()
        let relaunched = try #require(fixture.relaunch().record("c"))
        #expect(relaunched.sessionId != next.sessionId)
        #expect(relaunched.userId == nil)
    }

    @Test func aRelaunchAfterAnExplicitEndStartsAnonymous() async throws {
        let fixture = try RecorderFixture()
        await fixture.recorder.startSession(userID: "u1", metadata: ["plan": "pro"])
        fixture.recorder.record("a")
        await fixture.recorder.endSession()
        fixture.clock.advance(by: 3600)
        let relaunched = fixture.relaunch()
        let event = try #require(relaunched.record("b"))
        #expect(event.userId == nil)
        #expect(await relaunched.currentSession()?.metadata == nil)
    }

    @Test func endSessionWithoutAnOpenSessionStillForgetsTheUser() async throws {
        let fixture = try RecorderFixture()
        await fixture.recorder.startSession(userID: "u1")
        fixture.recorder.record("a")
        // A relaunch past the timeout: the next run has no open session, only the user to continue.
        fixture.clock.advance(by: 3600)
        let relaunched = fixture.relaunch()
        await relaunched.endSession()
        #expect(try #require(relaunched.record("b")).userId == nil)
    }

    @Test func startingASessionEndsTheCurrentOne() async throws {
        let fixture = try RecorderFixture()
        let first = await fixture.recorder.startSession(userID: "u1")
        let second = await fixture.recorder.startSession(userID: "u2")
        #expect(first.id != second.id)
        let sessions = await fixture.recorder.listAllSessions()
        #expect(sessions.first { $0.id == first.id }?.endedAt != nil)
        #expect(sessions.first { $0.id == second.id }?.endedAt == nil)
    }

    @Test func backgroundFlushesAndCanEndTheSession() async throws {
        let fixture = try RecorderFixture { $0.endsSessionInBackground = true }
        let lifecycle = ManualAppLifecycle()
        fixture.recorder.attach(lifecycle: lifecycle)
        await fixture.recorder.startSession(userID: "u1")
        fixture.recorder.record("a")
        lifecycle.send(.didEnterBackground)
        #expect(await eventually { await fixture.recorder.currentSession() == nil })
        #expect(await fixture.recorder.listAllSessions().first?.endedAt != nil)
        // A session the background ended hands its user to the next one, unlike endSession().
        #expect(try #require(fixture.recorder.record("b")).userId == "u1")
    }

    @Test func backgroundKeepsTheSessionByDefault() async throws {
        let fixture = try RecorderFixture()
        let lifecycle = ManualAppLifecycle()
        fixture.recorder.attach(lifecycle: lifecycle)
        let session = await fixture.recorder.startSession()
        lifecycle.send(.didEnterBackground)
        // Once the recorder has handled it (flushed), the session is still the same.
        #expect(await eventually { fixture.recorder.lifecycleEventsHandled == 1 })
        #expect(await fixture.recorder.currentSession()?.id == session.id)
    }
}
