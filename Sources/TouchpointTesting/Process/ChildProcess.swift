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
/// `swiftc`. Output goes to temporary files, so a chatty child never blocks on a full pipe.
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
        let handles = try [
            FileHandle(forReadingFrom: paths[0]), FileHandle(forWritingTo: paths[1]),
            FileHandle(forWritingTo: paths[2]),
        ]
        defer { for handle in handles { try? handle.close() } }

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = handles[0]
        process.standardOutput = handles[1]
        process.standardError = handles[2]
        let exit = ExitSignal()
        process.terminationHandler = { _ in exit.fire() }
        do {
            try process.run()
        } catch {
            throw LaunchError(description: "cannot start \(executable.path): \(error)")
        }
        let finished = await exit.wait(seconds: timeout)
        if !finished {
            process.terminate()
            if await !exit.wait(seconds: 5) { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        let read = { (url: URL) in String(decoding: (try? Data(contentsOf: url)) ?? Data(), as: UTF8.self) }
        return Result(
            status: process.terminationStatus, output: read(paths[1]), errors: read(paths[2]), timedOut: !finished)
    }

    /// The child's exit, awaited with a deadline.
    private final class ExitSignal: Sendable {
        private struct State {
            var fired = false
            var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
            var expired: Set<Int> = []
            var next = 0
        }

        private let state = Locked(State())

        func fire() {
            let waiters = state.withLock { state in
                state.fired = true
                defer { state.waiters.removeAll() }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume(returning: true) }
        }

        /// Whether the exit came within `seconds`.
        func wait(seconds: TimeInterval) async -> Bool {
            let id = state.withLock { state in
                state.next += 1
                return state.next
            }
            let deadline = Task { [state] in
                try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
                state.withLock { state in
                    state.expired.insert(id)
                    return state.waiters.removeValue(forKey: id)
                }?.resume(returning: false)
            }
            defer { deadline.cancel() }
            return await withCheckedContinuation { continuation in
                let answer = state.withLock { state -> Bool? in
                    if state.fired { return true }
                    if state.expired.contains(id) { return false }
                    state.waiters[id] = continuation
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        }
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
