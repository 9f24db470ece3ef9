import Foundation
import Testing
import TouchpointEvents
import TouchpointTesting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The durability promise seen from outside: a child process records in a loop and prints each
/// index once `record` has returned; it is killed with SIGKILL at a random moment, twenty times
/// in a row over the same directory. Every relaunch resumes the session, cutting what the kill
/// tore; at the end every printed event is on disk, in order, once.
struct KillLoopTests {
    @Test func everyEventReportedBeforeTwentySIGKILLsIsOnDisk() async throws {
        let directory = try TemporaryDirectory(prefix: "kill-loop")
        var reported: [[Int]] = []
        var generator = SystemRandomNumberGenerator()
        for run in 0..<20 {
            let child = try SpawnedProcess(
                ChildProcess.builtProduct("TouchpointRecordLoop"), [directory.path, String(run)], output: .capture)
            // Let it record a random number of events (a few, up to tens of thousands), then kill it.
            let lines = [1, 10, 100, 1_000, 20_000][run % 5] + Int.random(in: 0..<500, using: &generator)
            let running = await eventually(timeout: .seconds(120)) {
                child.output.reduce(0) { $0 + ($1 == 10 ? 1 : 0) } >= lines || !child.isRunning
            }
            #expect(running, "run \(run) printed \(lines) lines")
            child.send(SIGKILL)
            #expect(
                await child.exit() == .signaled(SIGKILL), "run \(run): \(String(decoding: child.errors, as: UTF8.self))"
            )
            await child.capturesEnded()
            // The last printed line may itself be cut: only whole lines were reported.
            let text = String(decoding: child.output, as: UTF8.self)
            reported.append(
                text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().compactMap { Int($0) })
            #expect(reported[run].count >= lines)
        }

        let stored = await onOwnThread {
            var runs = [[Int]](repeating: [], count: 20)
            EventLogReader(directory: directory.url).forEachEvent(matching: EventQuery(name: "loop")) { event in
                if let run = event.properties["run"]?.intValue, let index = event.properties["index"]?.intValue {
                    runs[run].append(index)
                }
                return true
            }
            return runs
        }
        for run in 0..<20 {
            #expect(stored[run].count >= reported[run].count, "run \(run)")
            #expect(Array(stored[run].prefix(reported[run].count)) == reported[run], "run \(run)")
            #expect(stored[run] == Array(0..<stored[run].count), "run \(run): no gaps, no duplicates")
        }

        // The killed runs left the session open; a recorder resuming it cuts the last kill's tear
        // and its allocated space, and the log ends as exactly its lines.
        let recorder = EventRecorder(directory: directory.url)
        recorder.record("after")
        await recorder.endSession()
        let sessions = await recorder.listAllSessions()
        #expect(sessions.count >= 1)
        for session in sessions {
            let relative = LogLayout(base: directory.url).relativeSessionDirectory(
                userId: session.userId, sessionId: session.id)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + relative + "/events.jsonl"))
            #expect(bytes.last == 10 && !bytes.contains(0), "session \(session.id): whole lines only")
        }
    }
}
