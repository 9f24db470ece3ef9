import Foundation
import Testing
import Touchpoint

/// The `touchpoint` tool built next to the test bundle, run as a child process that a test may kill, whose output goes
/// to files (so a killed child never blocks on a full pipe).
struct KillableProcess {
    struct Result {
        let status: Int32
        let reason: Process.TerminationReason
        let output: String
        let errors: String
    }

    /// The `touchpoint` executable of this build.
    static var touchpoint: URL {
        let candidates = [
            Bundle.main.bundleURL.deletingLastPathComponent(),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        ]
        return candidates.map { $0.appendingPathComponent("touchpoint") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    let process = Process()
    let outputPath: String
    let errorsPath: String

    /// Starts `executable` with `arguments`, writing its output under `directory`.
    init(_ executable: URL, _ arguments: [String], logsIn directory: URL) throws {
        let name = UUID().uuidString
        outputPath = directory.appendingPathComponent("\(name).out").path
        errorsPath = directory.appendingPathComponent("\(name).err").path
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorsPath, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorsPath))
        try process.run()
    }

    /// Waits for the child to exit (killing it after `timeout` seconds) and collects its output.
    func finish(timeout: Double = 120) async -> Result {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                Issue.record("\(process.executableURL?.lastPathComponent ?? "child") did not exit within \(timeout) s")
                process.terminate()
            }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, reason: process.terminationReason,
            output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? "")
    }

    /// Kills the child without warning.
    func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
    }
}
