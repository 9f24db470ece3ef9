import Foundation
import TouchpointCore

/// A `touchpoint serve` process, built next to the test bundle, for tests across processes.
final class CollectorProcess: @unchecked Sendable {
    // Safe: `process` is configured before `run()` and afterwards only read; output goes through a lock.
    let process = Process()
    private let output = Locked<[UInt8]>([])
    private(set) var port = 0

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

    /// Starts `touchpoint serve --port 0 …` and waits until it prints where it listens.
    static func start(_ arguments: [String], timeout: Duration = .seconds(60)) async throws -> CollectorProcess {
        let collector = CollectorProcess()
        collector.process.executableURL = try executable()
        collector.process.arguments = ["serve", "--port", "0", "--log-level", "warning"] + arguments
        let pipe = Pipe()
        collector.process.standardOutput = pipe
        pipe.fileHandleForReading.readabilityHandler = { [output = collector.output] handle in
            let data = handle.availableData
            output.withLock { $0.append(contentsOf: data) }
        }
        try collector.process.run()
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let port = collector.listeningPort() {
                collector.port = port
                return collector
            }
            guard collector.process.isRunning else {
                throw TestFailure(
                    "touchpoint serve exited with \(collector.process.terminationStatus): \(collector.text)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        collector.process.interrupt()
        throw TestFailure("touchpoint serve did not report a port within \(timeout): \(collector.text)")
    }

    /// Everything the process printed so far.
    var text: String { String(decoding: output.value, as: UTF8.self) }

    private func listeningPort() -> Int? {
        guard let range = text.range(of: "listening on http://127.0.0.1:") else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isNumber }
        guard text[range.upperBound...].dropFirst(digits.count).first == "\n" else { return nil }
        return Int(digits)
    }

    /// Sends SIGTERM and waits for the exit status.
    func terminate(timeout: Duration = .seconds(30)) async throws -> Int32 {
        process.terminate()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                kill(process.processIdentifier, SIGKILL)
                throw TestFailure("touchpoint serve did not stop within \(timeout) of SIGTERM")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
    }
}
