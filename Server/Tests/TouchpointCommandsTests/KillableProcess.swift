import Foundation
import Testing
import Touchpoint
import TouchpointTesting

/// The `touchpoint` tool built next to the test bundle, run as a child process that a test may kill, whose output goes
/// to files (so a killed child never blocks on a full pipe).
struct KillableProcess {
    struct Result {
        let status: Int32
        /// Whether a signal ended it.
        let killed: Bool
        let output: String
        let errors: String
    }

    /// The `touchpoint` executable of this build.
    static var touchpoint: URL { ChildProcess.builtProduct("touchpoint") }

    let child: SpawnedProcess
    let outputPath: String
    let errorsPath: String

    /// Starts `executable` with `arguments`, writing its output under `directory`.
    init(_ executable: URL, _ arguments: [String], logsIn directory: URL) throws {
        let name = UUID().uuidString
        outputPath = directory.appendingPathComponent("\(name).out").path
        errorsPath = directory.appendingPathComponent("\(name).err").path
        child = try SpawnedProcess(executable, arguments, output: .file(outputPath), errors: .file(errorsPath))
    }

    /// Waits for the child to exit (killing it after `timeout` seconds) and collects its output.
    func finish(timeout: Double = 120) async -> Result {
        let termination: SpawnedProcess.Termination
        if let ended = await child.exit(within: timeout) {
            termination = ended
        } else {
            Issue.record("\(URL(fileURLWithPath: outputPath).lastPathComponent) child did not exit within \(timeout) s")
            child.send(SIGKILL)
            termination = await child.exit()
        }
        let signaled = if case .signaled = termination { true } else { false }
        return Result(
            status: termination.status, killed: signaled,
            output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? "")
    }

    /// Kills the child without warning.
    func kill() {
        child.send(SIGKILL)
    }
}
