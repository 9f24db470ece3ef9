import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

/// The seed's Quick Start and analytics helpers, as a user pastes them (with a recorder over a
/// temporary directory in place of `EventRecorder.shared`).
struct QuickStartTests {
    @Test func seedQuickStartWorksAsWritten() async throws {
        let directory = try TemporaryDirectory()
        let recorder = EventRecorder(directory: directory.url)

        // Start an event session (optional userId + metadata)
        let session = await recorder.startSession(
            userID: "user-123",
            metadata: [
                "plan": .string("pro"),
                "ab": .string("variantA"),
            ])

        // Record events scoped to the current session
        recorder.record(
            "button_tap",
            properties: [
                "screen": .string("Home"),
                "count": .int(1),
                "success": .bool(true),
            ])

        // Read events
        let sessionEvents = await recorder.eventsInCurrentSession()
        let allEvents = await recorder.allEvents()
        #expect(sessionEvents.map(\.name) == ["button_tap"])
        #expect(allEvents == sessionEvents)
        #expect(sessionEvents[0].sessionId == session.id)
        #expect(sessionEvents[0].userId == "user-123")
        #expect(sessionEvents[0].properties == ["screen": "Home", "count": 1, "success": true])

        // Analytics helpers
        let all = await recorder.listAllSessions()
        let userSessions = await recorder.listSessions(forUserID: "user-123")
        let events = await recorder.events(forSessionID: userSessions.first!.id)
        #expect(all.map(\.id) == [session.id])
        #expect(events == sessionEvents)

        // End session (optional)
        await recorder.endSession()
        let ended = try #require(await recorder.listAllSessions().first)
        #expect(ended.endedAt != nil)
        #expect(ended.metadata == ["plan": "pro", "ab": "variantA"])

        // Clear all stored data
        await recorder.clear()
        #expect(await recorder.allEvents().isEmpty)
        #expect(await recorder.listAllSessions().isEmpty)
    }

    @Test func sharedRecorderExistsWithThePlatformDirectory() {
        #expect(EventRecorder.shared.directory == EventRecorder.defaultDirectory)
    }
}
