import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

struct RecordTests {
    @Test func recordedEventIsOnDiskWhenRecordReturns() async throws {
        let fixture = try RecorderFixture()
        let event = try #require(fixture.recorder.record("button_tap", properties: ["screen": .string("Home")]))
        let session = try #require(await fixture.recorder.currentSession())
        // While the session is open its log ends with space allocated for the next events: zeros.
        let open = try Array(Data(contentsOf: URL(fileURLWithPath: fixture.eventsFile(session))))
        let line = event.jsonLine()
        #expect(Array(open.prefix(line.count)) == line, "one line, newline-terminated")
        #expect(open.dropFirst(line.count).allSatisfy { $0 == 0 })
        // Once the session ends, the file is exactly its lines.
        await fixture.recorder.endSession()
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: fixture.eventsFile(session)))) == line)
    }

    @Test func storageLayoutMatchesTheSeed() async throws {
        let fixture = try RecorderFixture()
        let session = await fixture.recorder.startSession(userID: "user-123", metadata: ["plan": "pro"])
        fixture.recorder.record("a")
        let folder = fixture.directory.path + "/users/user-123/sessions/\(session.id.uuidString)"
        let metadata = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/session.json"))))
        #expect(metadata["id"] == .string(session.id.uuidString))
        #expect(metadata["userId"] == "user-123")
        #expect(metadata["metadata"] == ["plan": "pro"])
        #expect(metadata["startedAt"]?.stringValue.flatMap(Timestamp.parse) == session.startedAt)
        #expect(metadata["endedAt"] == nil)
        #expect(FileManager.default.fileExists(atPath: folder + "/events.jsonl"))
    }

    @Test func everyEventCarriesTheEnvelope() async throws {
        let fixture = try RecorderFixture()
        await fixture.recorder.startSession(userID: "u1")
        let start = fixture.clock.now()
        let first = try #require(fixture.recorder.record("a", properties: ["n": .int(1)]))
        fixture.clock.advance(by: 0.0015)
        let second = try #require(fixture.recorder.record("b"))
        #expect(first.id != second.id)
        #expect(first.anonymousId == second.anonymousId && !first.anonymousId.isEmpty)
        #expect(first.timestamp == start)
        #expect(second.timestamp.timeIntervalSince(start) > 0.001)
        let session = try #require(await fixture.recorder.currentSession())
        let line = try #require(try fixture.lines(of: session).first)
        let json = try JSONParser.parse(line)
        for key in ["messageId", "type", "name", "timestamp", "sessionId", "userId", "anonymousId", "properties"] {
            #expect(json[key] != nil, "missing \(key)")
        }
        // ISO-8601 with milliseconds.
        #expect(json["timestamp"]?.stringValue == "2026-01-01T00:00:00.000Z")
    }

    @Test func anonymousIdIsStableAcrossLaunchesAndResetByClear() async throws {
        let fixture = try RecorderFixture()
        let id = try #require(fixture.recorder.record("a")).anonymousId
        #expect(try #require(fixture.relaunch().record("b")).anonymousId == id)
        await fixture.recorder.clear()
        #expect(try #require(fixture.relaunch().record("c")).anonymousId != id)
    }

    @Test func propertiesMayBeAnyJSON() async throws {
        let fixture = try RecorderFixture()
        let properties: [String: EventValue] = [
            "tags": ["a", "b"], "nested": ["k": .null, "x": 1.5], "none": .null, "big": .int(Int.max),
            "text": "line\nbreak \"quoted\" ünïcödé 😀",
        ]
        let event = try #require(fixture.recorder.record("rich", properties: properties))
        let stored = await fixture.recorder.eventsInCurrentSession()
        #expect(stored == [event])
        #expect(stored.first?.properties == properties)
    }

    @Test func oversizedEventIsRejectedAndNeverWritten() async throws {
        let fixture = try RecorderFixture()
        fixture.recorder.record("small")
        let huge = String(repeating: "x", count: 33 * 1024)
        #expect(fixture.recorder.record("huge", properties: ["blob": .string(huge)]) == nil)
        #expect(fixture.recorder.statistics.rejectedOversized == 1)
        #expect(await fixture.recorder.eventsInCurrentSession().map(\.name) == ["small"])
    }

    @Test func creatingARecorderTouchesNothingOnDisk() throws {
        let directory = try TemporaryDirectory()
        let base = directory.appending("not-yet")
        _ = EventRecorder(directory: base)
        #expect(!FileManager.default.fileExists(atPath: base.path))
    }

    @Test(arguments: [
        ("user-123", "user-123"), ("a/b", "a_b"), ("..", "_."), (".hidden", "_hidden"), ("", "anon"),
        ("mail@example.com", "mail@example.com"), ("名前", "__"),
    ])
    func userFoldersAreSafe(userId: String, folder: String) {
        #expect(LogLayout.userFolder(for: userId) == folder)
    }

    @Test func longUserIdsGetBoundedFolderNames() {
        let folder = LogLayout.userFolder(for: String(repeating: "a", count: 500))
        #expect(folder.count <= 100)
        #expect(folder != LogLayout.userFolder(for: String(repeating: "a", count: 501)))
    }

    @Test func sessionsListedByUserUseTheExactId() async throws {
        let fixture = try RecorderFixture()
        await fixture.recorder.startSession(userID: "a/b")
        fixture.recorder.record("x")
        fixture.clock.advance(by: 1)
        await fixture.recorder.startSession(userID: "a_b")
        fixture.recorder.record("y")
        fixture.clock.advance(by: 1)
        await fixture.recorder.startSession(userID: nil)
        fixture.recorder.record("z")
        #expect(await fixture.recorder.listSessions(forUserID: "a/b").count == 1)
        #expect(await fixture.recorder.listSessions(forUserID: "a_b").count == 1)
        #expect(await fixture.recorder.listSessions(forUserID: nil).count == 1)
        #expect(await fixture.recorder.listAllSessions().count == 3)
        #expect(await fixture.recorder.allEvents().map(\.name) == ["x", "y", "z"])
    }

    @Test func queriesFilterByNameUserAndTime() async throws {
        let fixture = try RecorderFixture()
        await fixture.recorder.startSession(userID: "u1")
        fixture.recorder.record("open")
        fixture.clock.advance(by: 10)
        fixture.recorder.record("buy")
        await fixture.recorder.startSession(userID: "u2")
        fixture.recorder.record("buy")
        var names: [String] = []
        await fixture.recorder.forEachEvent(matching: EventQuery(name: "buy")) { event in
            names.append(event.userId ?? "-")
            return true
        }
        #expect(names == ["u1", "u2"])
        let reader = fixture.recorder.reader
        #expect(reader.events(matching: EventQuery(userId: "u1")).map(\.name) == ["open", "buy"])
        let start = fixture.clock.now().addingTimeInterval(-5)
        #expect(reader.events(matching: EventQuery(since: start)).count == 2)
        #expect(reader.events(matching: EventQuery(until: start)).map(\.name) == ["open"])
    }

    @Test func eventsOfAnUnknownSessionAreEmpty() async throws {
        let fixture = try RecorderFixture()
        fixture.recorder.record("x")
        #expect(await fixture.recorder.events(forSessionID: UUID()).isEmpty)
    }
}
