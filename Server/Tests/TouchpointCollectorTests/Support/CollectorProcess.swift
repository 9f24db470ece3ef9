import Foundation
import TouchpointCore
import TouchpointTesting

/// A `touchpoint serve` process, built next to the test bundle, for tests across processes.
final class CollectorProcess: Sendable {
    let process: SpawnedProcess
    let port: Int

    private init(process: SpawnedProcess, port: Int) {
        self.process = process
        self.port = port
    }

    /// The `touchpoint` executable: beside the test bundle in `.build/<configuration>/`.
    static func executable() throws -> URL {
        var candidates: [URL] = []
        if let bundle = Bundle.main.executableURL { candidates.append(bundle.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        for argument in CommandLine.arguments where argument.hasSuffix(".xctest") {
            candidates.append(URL(fileURLWithPath: argument).deletingLastPathComponent())
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug"))
        for directory in candidates {
            let url = directory.appendingPathComponent("touchpoint")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw TestFailure(
            "the touchpoint executable was not found beside the tests (\(candidates.map(\.path))); run swift build first"
        )
    }

    /// Starts `touchpoint serve --port 0 …` and waits until it prints where it listens (`http://`, or
    /// `https://` with `--tls-cert`).
    static func start(_ arguments: [String], timeout: Duration = .seconds(60)) async throws -> CollectorProcess {
        let process = try SpawnedProcess(
            try executable(), ["serve", "--port", "0", "--log-level", "warning"] + arguments, output: .capture,
            errors: .capture)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let port = listeningPort(in: text(of: process)) { return CollectorProcess(process: process, port: port) }
            if let ended = process.termination {
                await process.capturesEnded()
                throw TestFailure(
                    "touchpoint serve exited with \(ended): \(text(of: process)) \(String(decoding: process.errors, as: UTF8.self))"
                )
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.send(SIGKILL)
        throw TestFailure("touchpoint serve did not report a port within \(timeout): \(text(of: process))")
    }

    private static func text(of process: SpawnedProcess) -> String { String(decoding: process.output, as: UTF8.self) }

    /// Everything the process printed so far.
    var text: String { Self.text(of: process) }

    private static func listeningPort(in text: String) -> Int? {
        guard
            let range = text.range(of: "listening on http://127.0.0.1:")
                ?? text.range(of: "listening on https://127.0.0.1:")
        else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isNumber }
        guard text[range.upperBound...].dropFirst(digits.count).first == "\n" else { return nil }
        return Int(digits)
    }

    /// Sends SIGTERM and waits for the exit status.
    func terminate(timeout: Duration = .seconds(30)) async throws -> Int32 {
        process.send(SIGTERM)
        guard let ended = await process.exit(within: Double(timeout.components.seconds)) else {
            process.send(SIGKILL)
            throw TestFailure("touchpoint serve did not stop within \(timeout) of SIGTERM")
        }
        return ended.status
    }
}
