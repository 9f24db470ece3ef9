import ArgumentParser
import Foundation
import Touchpoint

/// Hidden commands that tests drive as child processes.
struct DebugCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "debug",
        abstract: "Commands for Touchpoint's own tests.",
        shouldDisplay: false,
        subcommands: [RecordLoop.self])

    /// Records events in a loop and prints each index once `record` has returned, so a parent
    /// can kill the process at any moment and check that every printed index is on disk.
    struct RecordLoop: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "record-loop")

        @Option(help: "How many events to record (default: until killed).")
        var count: Int?

        @OptionGroup var directory: LogDirectoryOption

        func run() throws {
            let recorder = EventRecorder(directory: directory.url)
            var index = 0
            while count.map({ index < $0 }) ?? true {
                guard recorder.record("loop", properties: ["index": .int(index)]) != nil else {
                    throw ValidationError("record rejected event \(index)")
                }
                StandardOutput.line(String(index))
                index += 1
            }
        }
    }
}
