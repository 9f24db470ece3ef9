import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointDelivery

/// The per-destination state file: what it refuses, and what survives damage.
struct DeliveryStateFileTests {
    func file() throws -> (TemporaryDirectory, DeliveryStateFile) {
        let directory = try TemporaryDirectory(prefix: "delivery-state")
        let destination = DeliveryDestination(endpoint: URL(string: "http://127.0.0.1:9")!, writeKey: "k")
        let file = DeliveryStateFile(directory: directory.url, destination: destination)
        try FileManager.default.createDirectory(
            atPath: (file.path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        return (directory, file)
    }

    func write(_ text: String, to file: DeliveryStateFile) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: file.path))
    }

    @Test func aWrittenStateReadsBack() throws {
        let (directory, file) = try file()
        defer { withExtendedLifetime(directory) {} }
        var contents = DeliveryStateFile.Contents()
        contents.cursor = DeliveryCursor(journalOffset: 120, sessionId: UUID(), eventOffset: 4_096)
        contents.isEnabled = false
        try file.write(contents)
        let read = try #require(try file.read())
        #expect(read.cursor == contents.cursor)
        #expect(read.isEnabled == false)
    }

    @Test(arguments: [
        #"{"version":1,"cursor":{"journalOffset":120,"eventOffset":40,"sessionId":"not-a-uuid"},"enabled":false}"#,
        #"{"version":1,"cursor":{"journalOffset":120,"eventOffset":40},"enabled":false}"#,
    ])
    func aCursorPastTheStartWithoutAValidSessionIsRefusedButTheOptOutSurvives(text: String) throws {
        let (directory, file) = try file()
        defer { withExtendedLifetime(directory) {} }
        try write(text, to: file)
        #expect(throws: DeliveryError.self) { try file.read() }
        #expect(file.enabledFlag() == false)
    }

    @Test func theStartOfTheLogNeedsNoSession() throws {
        let (directory, file) = try file()
        defer { withExtendedLifetime(directory) {} }
        try write(#"{"version":1,"cursor":{"journalOffset":0,"eventOffset":0}}"#, to: file)
        #expect(try file.read()?.cursor == .start)
    }
}
