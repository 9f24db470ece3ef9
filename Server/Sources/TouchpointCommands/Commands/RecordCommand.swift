import ArgumentParser
import Foundation
import Touchpoint

/// `touchpoint record NAME [key=value …]`: records one event into a local log.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record an event into a local log.",
        discussion: """
            Values are read as JSON when they are JSON, otherwise as strings:
              touchpoint record checkout_success amount=120 coupon=SPRING ok=true
            """)

    @Argument(help: "The event's name.")
    var name: String

    @Argument(help: "Properties as key=value.")
    var properties: [PropertyArgument] = []

    @Option(help: "Start a session for this user id first (default: continue the current session).")
    var user: String?

    @Flag(help: "Print the recorded event as JSON.")
    var json = false

    @OptionGroup var directory: LogDirectoryOption

    func run() async throws {
        let recorder = EventRecorder(directory: directory.url)
        if let user, await recorder.currentSession()?.userId != user {
            await recorder.startSession(userID: user)
        }
        var values: [String: EventValue] = [:]
        for property in properties { values[property.key] = property.value }
        guard let event = recorder.record(name, properties: values) else {
            throw ValidationError("the event was rejected: it is larger than 32 KB")
        }
        try await recorder.flush()
        print(
            json
                ? EventFormatting.jsonLine(event)
                : "recorded \(event.name) (\(event.messageId)) in session \(event.sessionId)")
    }
}
