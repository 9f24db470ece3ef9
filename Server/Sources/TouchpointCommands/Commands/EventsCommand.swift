import ArgumentParser
import Foundation
import Touchpoint

/// `touchpoint events list|tail`: read a local log's events.
struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Read the events of a local log.",
        subcommands: [List.self, Tail.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List stored events, sessions oldest first.")

        @Option(help: "Only events with this name.")
        var name: String?

        @Option(help: "Only events of this user's sessions.")
        var user: String?

        @Option(help: "Only events of this session (its id).")
        var session: String?

        @Option(help: "Only events at or after this ISO-8601 time.")
        var since: String?

        @Option(help: "Only events before this ISO-8601 time.")
        var until: String?

        @Option(help: "Stop after this many events.")
        var limit: Int?

        @Flag(help: "One JSON object per line (the events.jsonl format).")
        var json = false

        @OptionGroup var directory: LogDirectoryOption

        func run() throws {
            var query = EventQuery(name: name, userId: user)
            if let session {
                guard let id = UUID(uuidString: session) else {
                    throw ValidationError("--session: not a session id: \(session)")
                }
                query.sessionId = id
            }
            query.since = try since.map { try Self.time($0, option: "--since") }
            query.until = try until.map { try Self.time($0, option: "--until") }
            if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
            var count = 0
            let report = EventLogReader(directory: directory.url).forEachEvent(matching: query) { event in
                print(json ? EventFormatting.jsonLine(event) : EventFormatting.humanLine(event))
                count += 1
                return limit.map { count < $0 } ?? true
            }
            if !json { print("\(count) event\(count == 1 ? "" : "s")") }
            EventsCommand.warn(about: report)
        }

        static func time(_ text: String, option: String) throws -> Date {
            guard let date = Timestamp.parse(text) else {
                throw ValidationError("\(option): not an ISO-8601 time (e.g. 2026-11-22T09:00:00Z): \(text)")
            }
            return date
        }
    }

    struct Tail: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print events as they are recorded (including by other processes).")

        @Flag(help: "Print the events already stored first.")
        var fromStart = false

        @Option(help: "Exit after printing this many events.")
        var count: Int?

        @Option(help: "Exit after this many seconds.")
        var timeout: Double?

        @Option(help: "How often to look for new events, in seconds.")
        var interval: Double = 0.2

        @Flag(help: "One JSON object per line.")
        var json = false

        @OptionGroup var directory: LogDirectoryOption

        func run() throws {
            let reader = EventLogReader(directory: directory.url)
            let journal = SessionJournal(layout: reader.layout)
            var journalOffset: Int64 = 0
            var sessions: [(directory: String, offset: Int64)] = []
            var printed = 0
            let deadline = timeout.map { Date().addingTimeInterval($0) }
            var first = true
            while true {
                journalOffset = try journal.entries(from: journalOffset) { entry in
                    sessions.append((entry.directory, 0))
                    return true
                }.end
                for index in sessions.indices {
                    let print = !first || fromStart
                    sessions[index].offset =
                        reader.forEachEvent(
                            inSessionDirectory: sessions[index].directory, from: sessions[index].offset
                        ) { event, _ in
                            guard print else { return true }
                            StandardOutput.line(
                                json ? EventFormatting.jsonLine(event) : EventFormatting.humanLine(event))
                            printed += 1
                            return count.map { printed < $0 } ?? true
                        }.end
                    if let count, printed >= count { return }
                }
                first = false
                if let deadline, Date() >= deadline { return }
                Thread.sleep(forTimeInterval: max(0.01, interval))
            }
        }
    }

    static func warn(about report: EventLogReadReport) {
        guard report.damagedLines + report.tornTails + report.damagedSessions > 0 else { return }
        var standardError = FileHandle.standardError
        print(
            "warning: skipped \(report.damagedLines) damaged lines and \(report.tornTails) torn last lines; \(report.damagedSessions) sessions had no readable session.json",
            to: &standardError)
    }
}

extension FileHandle: @retroactive TextOutputStream {
    public func write(_ string: String) { write(Data(string.utf8)) }
}
