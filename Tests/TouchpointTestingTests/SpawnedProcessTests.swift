import Foundation
import Testing
import TouchpointTesting

/// Children started with `posix_spawn`: exit statuses, signals, captured output, deadlines.
struct SpawnedProcessTests {
    static let shell = URL(fileURLWithPath: "/bin/sh")

    @Test func anExitStatusAndCapturedOutputAndErrors() async throws {
        let child = try SpawnedProcess(
            Self.shell, ["-c", "printf out; printf err >&2; exit 3"], output: .capture, errors: .capture)
        #expect(await child.exit() == .exited(3))
        await child.capturesEnded()
        #expect(String(decoding: child.output, as: UTF8.self) == "out")
        #expect(String(decoding: child.errors, as: UTF8.self) == "err")
        #expect(!child.isRunning)
    }

    /// Many short children, each awaited with a deadline that does not pass: each answer is the exit.
    @Test func anExitBeforeTheDeadlineIsTheAnswerEveryTime() async throws {
        for _ in 0..<40 {
            let child = try SpawnedProcess(URL(fileURLWithPath: "/bin/true"), [])
            #expect(await child.exit(within: 30) == .exited(0))
        }
    }

    @Test func aDeadlineThatPassesAnswersNilAndASignalEndsTheChild() async throws {
        let child = try SpawnedProcess(Self.shell, ["-c", "exec sleep 30"])
        #expect(await child.exit(within: 0.05) == nil)
        #expect(child.isRunning)
        child.send(SIGKILL)
        #expect(await child.exit() == .signaled(SIGKILL))
        #expect(child.waitUntilExit() == .signaled(SIGKILL))
    }

    @Test func standardInputFromAFileAndOutputToAFile() async throws {
        let directory = try TemporaryDirectory(prefix: "spawned")
        let input = directory.appending("in").path
        let output = directory.appending("out").path
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: input))
        let child = try SpawnedProcess(URL(fileURLWithPath: "/bin/cat"), [], input: .file(input), output: .file(output))
        #expect(await child.exit() == .exited(0))
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "hello\n")
    }

    /// The child gets no descriptor of the test process but its three streams.
    @Test func theChildInheritsNoOtherDescriptor() async throws {
        let pipe = Pipe()  // without close-on-exec, as Foundation makes it
        let child = try SpawnedProcess(Self.shell, ["-c", "ls /proc/self/fd"], output: .capture)
        #expect(await child.exit() == .exited(0))
        await child.capturesEnded()
        let descriptors = String(decoding: child.output, as: UTF8.self).split(separator: "\n").compactMap { Int($0) }
        #expect(!descriptors.contains(Int(pipe.fileHandleForWriting.fileDescriptor)), "\(descriptors)")
        // 0, 1, 2 and the directory `ls` reads.
        #expect(descriptors.count <= 4, "\(descriptors)")
    }

    @Test func aProgramThatCannotStartIsNamed() {
        #expect {
            _ = try SpawnedProcess(URL(fileURLWithPath: "/nonexistent/tool"), [])
        } throws: { error in
            (error as? SpawnedProcess.LaunchError)?.description.contains("/nonexistent/tool") == true
        }
    }
}
