import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

/// The SDK's durability promise seen from outside: `touchpoint debug record-loop` records and
/// prints each index after `record` returned; a SIGKILL at a random moment loses none of them.
struct RecordLoopKillTests {
    @Test(arguments: [0, 1, 2, 3, 4, 5])
    func everyEventReportedBeforeSIGKILLIsOnDisk(round: Int) async throws {
        let directory = try TemporaryDirectory(prefix: "kill-test")
        let child = try SpawnedProcess(
            ChildProcess.builtProduct("touchpoint"), ["debug", "record-loop", "--dir", directory.path], output: .capture
        )
        // Once the child is recording, let it run for a random number of events, then kill it
        // without warning.
        let lines = Int.random(in: 1...(200 + round * 2_000))
        let running = await eventually { child.output.reduce(0) { $0 + ($1 == 10 ? 1 : 0) } >= lines }
        #expect(running, "the child printed \(lines) lines")
        child.send(SIGKILL)
        #expect(await child.exit() == .signaled(SIGKILL))
        await child.capturesEnded()

        // The last printed line may itself be cut; only whole lines were reported.
        let text = String(decoding: child.output, as: UTF8.self)
        let reported = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().compactMap { Int($0) }
        #expect(reported.count > 0)
        // Tens of thousands of lines in a debug build: parse them off the cooperative pool.
        let stored = await onOwnThread {
            EventLogReader(directory: directory.url).events(matching: EventQuery(name: "loop"))
                .compactMap { $0.properties["index"]?.intValue }
        }
        #expect(stored.count >= reported.count)
        #expect(Array(stored.prefix(reported.count)) == reported)
        #expect(stored == Array(0..<stored.count), "no gaps, no duplicates")
    }
}
