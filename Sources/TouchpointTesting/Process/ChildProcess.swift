import Foundation
import TouchpointCore

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Runs a program to completion for a test, with a deadline: the `touchpoint` tool, `python3`,
/// `swiftc`. Output goes to temporary files, so a chatty child never blocks on a full pipe; the
/// child is a ``SpawnedProcess``.
///
/// ```swift
/// let result = try await ChildProcess.run(ChildProcess.builtProduct("touchpoint"), ["surveys", "validate", path])
/// #expect(result.status == 1)
/// #expect(result.output.contains("unknown operator"))
/// ```
public enum ChildProcess {
    /// How a run ended.
    public struct Result: Sendable, Hashable {
        /// The exit status (or the signal, when killed).
        public var status: Int32
        /// Everything written to standard output.
        public var output: String
        /// Everything written to standard error.
        public var errors: String
        /// Whether the deadline passed and the child was killed.
        public var timedOut: Bool
    }

    /// Why a program could not be started.
    public struct LaunchError: Error, CustomStringConvertible {
        /// What was wrong.
        public let description: String
    }

    /// Runs `executable` with `arguments`, feeding it `input`, and waits at most `timeout` seconds.
    ///
    /// The caller's task is suspended, not blocked, while the child runs: the cooperative thread
    /// pool (two threads on a two-core machine) stays free for the other tests.
    /// - Parameters:
    ///   - executable: the program.
    ///   - arguments: its arguments.
    ///   - input: its standard input (empty when nil).
    ///   - environment: extra environment variables.
    ///   - timeout: seconds before the child is killed.
    /// - Returns: status and output.
    /// - Throws: ``LaunchError`` when the program cannot be started.
    public static func run(
        _ executable: URL,
        _ arguments: [String],
        input: String? = nil,
        environment: [String: String] = [:],
        timeout: TimeInterval = 60
    ) async throws -> Result {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("child-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let paths = ["in", "out", "err"].map { scratch.appendingPathComponent($0) }
        try Data((input ?? "").utf8).write(to: paths[0])
        for path in paths.dropFirst() { _ = FileManager.default.createFile(atPath: path.path, contents: nil) }
        let child: SpawnedProcess
        do {
            child = try SpawnedProcess(
                executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                input: .file(paths[0].path), output: .file(paths[1].path), errors: .file(paths[2].path))
        } catch {
            throw LaunchError(description: "cannot start \(executable.path): \(error)")
        }
        var ended = await child.exit(within: timeout)
        let timedOut = ended == nil
        if ended == nil {
            child.send(SIGTERM)
            ended = await child.exit(within: 5)
            if ended == nil { child.send(SIGKILL) }
        }
        let termination: SpawnedProcess.Termination
        if let ended { termination = ended } else { termination = await child.exit() }
        let read = { (url: URL) in String(decoding: (try? Data(contentsOf: url)) ?? Data(), as: UTF8.self) }
        return Result(
            status: termination.status, output: read(paths[1]), errors: read(paths[2]), timedOut: timedOut)
    }

    /// The first executable named `name` on `PATH`, or nil.
    public static func onPath(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// A product of the package build (an executable such as `touchpoint`), found beside the
    /// running test bundle.
    public static func builtProduct(_ name: String) -> URL {
        let places = [
            Bundle.main.bundleURL.deletingLastPathComponent(),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL,
        ]
        let candidates = places.map { $0.appendingPathComponent(name) }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }
}
