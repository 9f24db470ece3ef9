import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

/// Consent and identity at the recorder, where every module records.
struct ConsentTests {
    static func eventFiles(_ directory: TemporaryDirectory) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: directory.path)
        return (enumerator?.allObjects as? [String] ?? []).filter { $0.hasSuffix("events.jsonl") }
    }

    @Test func optedOutNothingIsRecordedOrStoredAndTheChoiceOutlivesARelaunch() async throws {
        let fixture = try RecorderFixture()
        await fixture.recorder.optOut()
        #expect(fixture.recorder.isOptedOut)
        #expect(fixture.recorder.record("tap") == nil)
        await fixture.recorder.startSession(userID: "u1")
        #expect(fixture.recorder.record("tap", userID: "u1") == nil)
        #expect(fixture.recorder.statistics.refusedOptedOut == 2)
        #expect(Self.eventFiles(fixture.directory).isEmpty, "the log stays empty")
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.path + "/users"))

        let relaunched = fixture.relaunch()
        #expect(relaunched.isOptedOut)
        #expect(relaunched.record("tap") == nil)
        await relaunched.optIn()
        #expect(try #require(relaunched.record("tap")).name == "tap")
        #expect(!fixture.relaunch().isOptedOut)
    }

    @Test func optingOutKeepsOrDiscardsWhatWasRecorded() async throws {
        let keeping = try RecorderFixture()
        keeping.recorder.record("before")
        await keeping.recorder.optOut(discardingPending: false)
        #expect(await keeping.recorder.allEvents().map(\.name) == ["before"])

        let discarding = try RecorderFixture()
        let before = try #require(discarding.recorder.record("before"))
        await discarding.recorder.optOut(discardingPending: true)
        #expect(await discarding.recorder.allEvents().isEmpty)
        #expect(discarding.relaunch().isOptedOut, "the choice survives the data")
        await discarding.recorder.optIn()
        #expect(try #require(discarding.recorder.record("after")).anonymousId != before.anonymousId)
    }

    @Test func theDefaultAppliesUntilTheUserChooses() async throws {
        let fixture = try RecorderFixture { $0.optedOutByDefault = true }
        #expect(fixture.recorder.isOptedOut)
        #expect(fixture.recorder.record("tap") == nil)
        await fixture.recorder.optIn()
        let relaunched = fixture.relaunch { $0.optedOutByDefault = true }
        #expect(!relaunched.isOptedOut, "the user's choice wins over the default")

        let other = try RecorderFixture()
        other.recorder.setOptedOutByDefault(true)
        #expect(other.recorder.isOptedOut)
    }

    @Test func consumersHearOfConsent() async throws {
        final class Listener: EventConsumer {
            let changes = Locked<[Bool]>([])
            func eventRecorder(_ recorder: EventRecorder, didRecord event: Event, attachment: (any Sendable)?) {}
            func eventRecorder(_ recorder: EventRecorder, didChangeConsent isOptedOut: Bool) {
                changes.withLock { $0.append(isOptedOut) }
            }
        }
        let fixture = try RecorderFixture()
        let listener = Listener()
        fixture.recorder.addConsumer(listener)
        await fixture.recorder.optOut()
        await fixture.recorder.optOut()
        await fixture.recorder.optIn()
        #expect(listener.changes.value == [true, false])
    }

    @Test func resetStartsANewAnonymousUserAndKeepsWhatWasRecorded() async throws {
        let fixture = try RecorderFixture()
        let identified = try #require(fixture.recorder.record("identify", type: .identify, userID: "u1"))
        #expect(fixture.recorder.userId == "u1")
        let anonymousId = fixture.recorder.anonymousId
        fixture.clock.advance(by: 1)
        let newId = fixture.recorder.resetIdentity()
        #expect(newId != anonymousId)
        #expect(fixture.recorder.userId == nil)
        let after = try #require(fixture.recorder.record("tap"))
        #expect(after.userId == nil)
        #expect(after.anonymousId == newId)
        #expect(after.sessionId != identified.sessionId)
        let stored = await fixture.recorder.allEvents()
        #expect(stored.map(\.anonymousId) == [anonymousId, newId], "recorded before: under the old ids")
        #expect(stored.first?.userId == "u1")
        // Across a relaunch: the new id, and no user.
        let relaunched = fixture.relaunch()
        #expect(relaunched.anonymousId == newId)
        #expect(relaunched.userId == nil)
    }

    @Test func theUserOfThePreviousRunIsKnownBeforeTheFirstEvent() async throws {
        let fixture = try RecorderFixture()
        await fixture.recorder.startSession(userID: "u1")
        fixture.recorder.record("tap")
        #expect(fixture.relaunch().userId == "u1")
    }
}
