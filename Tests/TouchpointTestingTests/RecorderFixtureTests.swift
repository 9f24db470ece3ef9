import Foundation
import Testing
import TouchpointEvents
import TouchpointTesting

struct RecorderFixtureTests {
    @Test func aRecordedEventIsALineOfItsSessionsFile() async throws {
        let fixture = try RecorderFixture()
        let event = try #require(fixture.recorder.record("checkout_success"))
        #expect(event.timestamp == fixture.clock.now())
        let session = try #require(await fixture.recorder.currentSession())
        let lines = try fixture.lines(of: session)
        #expect(lines.count == 2 && lines[1].isEmpty, "one line, newline-terminated")
        #expect(try Event(jsonLine: lines[0]) == event)
    }

    @Test func aRelaunchOpensTheSameLogOnTheSameClock() async throws {
        let fixture = try RecorderFixture { $0.sessionTimeout = 120 }
        let session = try #require(fixture.recorder.record("before")).sessionId
        fixture.clock.advance(by: 60)
        #expect(fixture.relaunch { $0.sessionTimeout = 120 }.record("after")?.sessionId == session)
        fixture.clock.advance(by: 121)
        let again = RecorderFixture(directory: fixture.directory, clock: fixture.clock) { $0.sessionTimeout = 120 }
        #expect(again.recorder.record("later")?.sessionId != session, "past the timeout: a new session")
        #expect(await again.recorder.allEvents().map(\.name) == ["before", "after", "later"])
    }
}
