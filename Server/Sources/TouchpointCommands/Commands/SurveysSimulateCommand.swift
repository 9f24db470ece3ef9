import ArgumentParser
import Foundation
import Touchpoint

/// `touchpoint surveys simulate`: replays recorded events through a survey config.
struct SurveysSimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Replay recorded events through a survey config: which survey is shown when, and why others are not.",
        discussion: """
            Events are read in the events.jsonl format (e.g. from `touchpoint events list --json`) and \
            replayed by timestamp through the engine's matching and gating, starting from an empty \
            history. A shown survey is taken as answered at once unless --answer-after says otherwise.
            """)

    @Option(help: "The survey config (JSON).", completion: .file())
    var config: String

    @Option(help: "The events, one JSON object per line.", completion: .file())
    var events: String

    @Option(help: "Only the events of this user id (anon for anonymous sessions).")
    var user: String?

    @Option(help: "Seconds a shown survey stays on screen before it is answered.")
    var answerAfter: Double = 0

    @Flag(help: "Print the simulation as JSON.")
    var json = false

    func run() throws {
        guard answerAfter >= 0, answerAfter.isFinite else { throw ValidationError("--answer-after must be 0 or more") }
        let surveyConfig = try loadConfig()
        var replayed = try loadEvents()
        if let user { replayed = replayed.filter { SurveyGate.userKey(for: $0.userId) == user } }
        let simulation = SurveySimulator(config: surveyConfig, answerAfter: answerAfter).run(replayed)
        if json {
            print(simulation.json.jsonString(sortedKeys: true))
        } else {
            print(SurveySimulationText.render(simulation, surveys: surveyConfig.surveys.count, user: user))
        }
    }

    private func loadConfig() throws -> SurveyConfig {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: config)))
        } catch {
            throw ValidationError("cannot read \(config): \(error.localizedDescription)")
        }
        let load = SurveyConfig.load(bytes: bytes)
        guard load.isUsable else {
            throw ValidationError(
                "\(config) is not a usable survey config:\n" + load.problems.map { "  \($0)" }.joined(separator: "\n"))
        }
        for rejected in load.rejectedSurveys {
            let name = rejected.id.map { "\"\($0)\"" } ?? "surveys[\(rejected.index)]"
            warn("survey \(name) is malformed and left out (an app would drop it too):")
            for problem in rejected.problems { warn("  \(problem)") }
        }
        return load.config
    }

    private func loadEvents() throws -> [Event] {
        guard FileManager.default.fileExists(atPath: events) else { throw ValidationError("no such file: \(events)") }
        var loaded: [Event] = []
        do {
            try JSONLinesReader(path: events).forEachLine { line in
                guard !line.isOversized else {
                    warn("\(events):\(line.number): line too long, skipped")
                    return true
                }
                let blank = line.bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
                guard !blank else { return true }
                do {
                    loaded.append(try Event(jsonLine: line.bytes))
                } catch {
                    warn("\(events):\(line.number): not an event (\(error)), skipped")
                }
                return true
            }
        } catch {
            throw ValidationError("cannot read \(events): \(error)")
        }
        return loaded
    }

    private func warn(_ message: String) {
        var standardError = FileHandle.standardError
        print("warning: \(message)", to: &standardError)
    }
}
