import ArgumentParser
import Foundation
import Touchpoint

/// `touchpoint sessions list`: the sessions in a local log.
struct SessionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "Inspect the sessions of a local log.",
        subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List sessions, oldest first.")

        @Option(help: "Only this user's sessions.")
        var user: String?

        @Flag(help: "One JSON object per line.")
        var json = false

        @OptionGroup var directory: LogDirectoryOption

        func run() throws {
            let reader = EventLogReader(directory: directory.url)
            let sessions = user.map { reader.sessions(forUserID: $0) } ?? reader.sessions()
            if json {
                for session in sessions { print(EventFormatting.jsonLine(session)) }
                return
            }
            var table = TextTable("SESSION", "USER", "STARTED", "ENDED")
            for session in sessions {
                table.add(
                    session.id.uuidString, session.userId ?? "anon", Timestamp.format(session.startedAt),
                    session.endedAt.map(Timestamp.format) ?? "-")
            }
            print(table.rendered)
            print("\(sessions.count) session\(sessions.count == 1 ? "" : "s")")
        }
    }
}
