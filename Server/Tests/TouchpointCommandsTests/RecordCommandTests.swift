import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

/// The `touchpoint` tool, run as a user runs it: a child process over a real directory.
struct RecordCommandTests {
    struct Run {
        let status: Int32
        let output: String
        let errors: String
    }

    /// Runs the tool and waits for it without blocking a thread of the test runner's pool.
    static func run(_ arguments: [String], timeout: TimeInterval = 60) async throws -> Run {
        let result = try await ChildProcess.run(ChildProcess.builtProduct("touchpoint"), arguments, timeout: timeout)
        if result.timedOut {
            Issue.record("touchpoint \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        return Run(status: result.status, output: result.output, errors: result.errors)
    }

    @Test func recordThenListAsJSONAndAsATable() async throws {
        let directory = try TemporaryDirectory()
        let recorded = try await Self.run([
            "record", "checkout_success", "amount=120", "coupon=SPRING", "--user", "u1", "--dir", directory.path,
            "--json",
        ])
        #expect(recorded.status == 0, "\(recorded.errors)")
        let event = try Event(jsonLine: recorded.output.trimmingCharacters(in: .newlines))
        #expect(event.properties == ["amount": 120, "coupon": "SPRING"])
        #expect(event.userId == "u1")

        let listed = try await Self.run(["events", "list", "--json", "--dir", directory.path])
        #expect(try listed.output.split(separator: "\n").map { try Event(jsonLine: String($0)) } == [event])

        let table = try await Self.run(["events", "list", "--name", "checkout_success", "--dir", directory.path])
        #expect(table.output.contains("checkout_success"))
        #expect(table.output.contains("1 event"))

        let sessions = try await Self.run(["sessions", "list", "--dir", directory.path])
        #expect(sessions.output.contains(event.sessionId.uuidString))
        #expect(sessions.output.contains("1 session"))
        let byUser = try await Self.run(["sessions", "list", "--user", "nobody", "--json", "--dir", directory.path])
        #expect(byUser.output.isEmpty)
    }

    @Test func badArgumentsSayWhatIsWrong() async throws {
        let directory = try TemporaryDirectory()
        let badTime = try await Self.run(["events", "list", "--since", "yesterday", "--dir", directory.path])
        #expect(badTime.status != 0)
        #expect(badTime.errors.contains("--since: not an ISO-8601 time"))
        let badSession = try await Self.run(["events", "list", "--session", "nope", "--dir", directory.path])
        #expect(badSession.errors.contains("--session: not a session id: nope"))
    }

    @Test func damagedLinesAreReportedOnStandardError() async throws {
        let directory = try TemporaryDirectory()
        let recorder = EventRecorder(directory: directory.url)
        let session = await recorder.startSession(userID: "u1")
        recorder.record("good")
        let path = directory.path + "/users/u1/sessions/\(session.id.uuidString)/events.jsonl"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("garbage\n".utf8))
        try handle.close()
        let listed = try await Self.run(["events", "list", "--dir", directory.path])
        #expect(listed.status == 0)
        #expect(listed.output.contains("1 event"))
        #expect(listed.errors.contains("skipped 1 damaged lines"))
    }

    @Test func tailFollowsEventsRecordedByAnotherProcess() async throws {
        let directory = try TemporaryDirectory()
        let recorder = EventRecorder(directory: directory.url)
        recorder.record("before")
        let child = try SpawnedProcess(
            ChildProcess.builtProduct("touchpoint"),
            [
                "events", "tail", "--from-start", "--json", "--count", "3", "--timeout", "600", "--interval", "0.02",
                "--dir", directory.path,
            ], output: .capture)
        // Once the tail has caught up with what is stored, record more, in a new session too. (It
        // stops at its third event; the long timeout only bounds a tail that never sees them, so a
        // busy machine cannot end it early.)
        #expect(await eventually { !child.output.isEmpty }, "the tail printed what was stored")
        recorder.record("live-1")
        await recorder.startSession(userID: "u2")
        recorder.record("live-2")
        let end = await child.exit()
        await child.capturesEnded()
        let names = try String(decoding: child.output, as: UTF8.self).split(separator: "\n").map {
            try Event(jsonLine: String($0)).name
        }
        #expect(names == ["before", "live-1", "live-2"])
        #expect(end == .exited(0))
    }
}
