import ArgumentParser
import Foundation
import Touchpoint

/// `touchpoint surveys validate FILE`: every problem of a survey config, with its JSON path.
struct SurveysValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "List every problem of a survey config with its JSON path; exit 1 when there is one.",
        discussion: """
            Checks the JSON syntax, every field's type and range, operators and their values, unique \
            survey ids, and flags unknown fields (typos such as "oncePerSesion"), which an app would \
            silently ignore.
            """)

    @Argument(help: "The survey config (JSON).", completion: .file())
    var file: String

    @Flag(help: "Print the result as JSON.")
    var json = false

    func run() throws {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        } catch {
            throw ValidationError("cannot read \(file): \(error.localizedDescription)")
        }
        let problems: [JSONProblem]
        do {
            let value = try JSONParser.parse(bytes)
            problems = SurveyConfigValidator.validate(value)
        } catch {
            let (line, column) = Self.lineAndColumn(of: error.offset, in: bytes)
            problems = [JSONProblem(path: .root, message: "\(error.description) (line \(line), column \(column))")]
        }
        let surveys = SurveyConfig.load(bytes: bytes).config.surveys.count
        if json {
            let result: JSONValue = [
                "file": .string(file), "valid": .bool(problems.isEmpty), "surveys": .int(surveys),
                "problems": .array(
                    problems.map { ["path": .string($0.path.description), "message": .string($0.message)] }),
            ]
            print(result.jsonString(sortedKeys: true))
        } else if problems.isEmpty {
            print("\(file): valid (\(surveys) survey\(surveys == 1 ? "" : "s"))")
        } else {
            print("\(file): \(problems.count) problem\(problems.count == 1 ? "" : "s")")
            for problem in problems { print("  \(problem)") }
        }
        if !problems.isEmpty { throw ExitCode(1) }
    }

    /// The 1-based line and column (in bytes) of a byte offset.
    static func lineAndColumn(of offset: Int, in bytes: [UInt8]) -> (Int, Int) {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return (line, offset - lineStart + 1)
    }
}
