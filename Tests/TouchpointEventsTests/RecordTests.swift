import Foundation
import Testing
import Touchpoint
import TouchpointTesting

struct RecordTests {
    @Test func recordedEventIsOnDiskWhenRecordReturns() async throws {
        let directory = try TemporaryDirectory()
        let recorder = EventRecorder(directory: directory.url)
        let event = try #require(recorder.record("button_tap", properties: ["screen": .string("Home")]))
        let session = try #require(await recorder.currentSession())
        let path = directory.path + "/users/anon/sessions/\(session.id.uuidString)/events.jsonl"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        #expect(try Event(jsonLine: String(text.dropLast())) == event)
    }
}
