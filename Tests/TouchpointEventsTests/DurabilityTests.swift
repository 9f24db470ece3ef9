import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

struct DurabilityTests {
    @Test func aTornLastLineIsCutWhenTheSessionIsReopened() async throws {
        let fixture = try RecorderFixture()
        let session = await fixture.recorder.startSession(userID: "u1")
        let whole = try #require(fixture.recorder.record("whole"))
        // A kill in the middle of a copy leaves part of a line before the space the log had
        // allocated. The original stays open in this process: make that state in a copy of the
        // directory, as the killed process would have left it.
        let killed = try TemporaryDirectory(prefix: "killed")
        try FileManager.default.removeItem(at: killed.url)
        try FileManager.default.copyItem(at: fixture.directory.url, to: killed.url)
        let relative = "users/u1/sessions/\(session.id.uuidString)"
        let path = killed.path + "/" + relative + "/events.jsonl"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(whole.jsonLine().count))
        let torn = Data(#"{"messageId":"01A2","na"#.utf8)
        try handle.write(contentsOf: torn)
        try handle.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).last == 0, "allocated space follows the torn line")

        // Reading skips and reports it.
        let beforeRepair = EventLogReader(directory: killed.url).forEachEvent(inSessionDirectory: relative) { _, _ in
            true
        }
        #expect(beforeRepair.report.tornTails == 1)
        #expect(beforeRepair.end == Int64(whole.jsonLine().count))

        var configuration = EventRecorderConfiguration()
        configuration.clock = fixture.clock
        let relaunched = EventRecorder(directory: killed.url, configuration: configuration)
        #expect(try #require(relaunched.record("after")).sessionId == session.id)
        #expect(relaunched.statistics.repairedTornBytes == Int64(torn.count))
        await relaunched.endSession()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 3 && lines[2].isEmpty)
        #expect(try lines.dropLast().map { try Event(jsonLine: $0).name } == ["whole", "after"])
    }

    @Test func damagedLinesAreSkippedAndReported() async throws {
        let fixture = try RecorderFixture()
        let session = await fixture.recorder.startSession()
        fixture.recorder.record("one")
        await fixture.recorder.endSession()
        var garbage = Data("not json\n{\"messageId\":\"x\"}\n\n".utf8)
        garbage.append(contentsOf: [0xFF, 0xFE, 0x00, 0x0A])  // invalid UTF-8 and a NUL
        garbage.append(Data(String(repeating: "[", count: 10_000).utf8 + [0x0A]))
        let two = Event(
            name: "two", sessionId: session.id, userId: nil, anonymousId: fixture.recorder.anonymousId)
        garbage.append(Data(two.jsonLine()))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: fixture.eventsFile(session)))
        try handle.seekToEnd()
        try handle.write(contentsOf: garbage)
        try handle.close()

        let events = await fixture.recorder.events(forSessionID: session.id)
        #expect(events.map(\.name) == ["one", "two"])
        #expect(fixture.recorder.statistics.damagedLinesSkipped == 4)
    }

    @Test func anEventAfterAHoleOfZerosIsRead() async throws {
        // A power cut can leave a page of a mapped log unwritten (zeros) before pages that were.
        let fixture = try RecorderFixture()
        let session = await fixture.recorder.startSession()
        let first = try #require(fixture.recorder.record("first"))
        let second = try #require(fixture.recorder.record("second"))
        await fixture.recorder.endSession()
        var bytes = first.jsonLine()
        bytes.removeLast(5)  // the end of the first line never reached the disk...
        bytes += [UInt8](repeating: 0, count: 300)  // ...nor the rest of its page
        bytes += second.jsonLine()
        try Data(bytes).write(to: URL(fileURLWithPath: fixture.eventsFile(session)))
        #expect(await fixture.recorder.events(forSessionID: session.id).map(\.name) == ["second"])
        #expect(fixture.recorder.statistics.damagedLinesSkipped == 1)
    }

    @Test func readingNeverCrashesOnRandomFileContent() async throws {
        let directory = try TemporaryDirectory()
        let folder = directory.path + "/users/anon/sessions/\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var generator = UUIDv7Generator(seed: 42)
        for round in 0..<50 {
            var bytes: [UInt8] = []
            for _ in 0..<(round * 97 % 4096) {
                let random = generator.nextRandom()
                // Bias towards JSON-ish bytes so the parser gets deep, not just rejected at byte 0.
                bytes.append(
                    random % 3 == 0
                        ? Array(#"{}[]",:\n0123456789.eE-tfnul"#.utf8)[Int(random >> 8) % 27]
                        : UInt8(truncatingIfNeeded: random >> 16))
            }
            try Data(bytes).write(to: URL(fileURLWithPath: folder + "/events.jsonl"))
            try Data(bytes.prefix(200)).write(to: URL(fileURLWithPath: folder + "/session.json"))
            let reader = EventLogReader(directory: directory.url)
            _ = reader.events(matching: EventQuery())
            _ = reader.sessions()
        }
    }

    @Test func concurrentRecordsLoseAndInterleaveNothing() async throws {
        let fixture = try RecorderFixture()
        let threads = 8
        let perThread = 2_000
        // On threads of its own, so the test runner's small pool stays free for other tests.
        await onOwnThreads(threads) { thread in
            for index in 0..<perThread {
                fixture.recorder.record(
                    "t\(thread)",
                    properties: ["i": .int(index), "pad": .string(String(repeating: "p", count: index % 300))])
            }
        }
        let session = try #require(await fixture.recorder.currentSession())
        let lines = try fixture.lines(of: session).dropLast()
        #expect(lines.count == threads * perThread)
        let events = try lines.map { try Event(jsonLine: $0) }
        #expect(Set(events.map(\.id)).count == events.count)
        for thread in 0..<threads {
            let indices = events.filter { $0.name == "t\(thread)" }.map { $0.properties["i"]?.intValue ?? -1 }
            #expect(indices == Array(0..<perThread), "thread \(thread) order")
        }
        #expect(fixture.recorder.statistics.recorded == threads * perThread)
    }

    @Test func aFullDiskBuffersInMemoryAndFlushesWhenWritesWork() async throws {
        let fixture = try RecorderFixture()
        let session = await fixture.recorder.startSession(userID: "u1")
        fixture.recorder.record("before")
        // Make the session's log refuse writes with ENOSPC: point it at /dev/full.
        let path = fixture.eventsFile(session)
        try FileManager.default.moveItem(atPath: path, toPath: path + ".saved")
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/full")

        let relaunched = fixture.relaunch { $0.retryInterval = 0.02 }
        for index in 0..<5 { relaunched.record("during", properties: ["i": .int(index)]) }
        #expect(await relaunched.currentSession()?.id == session.id)
        #expect(relaunched.statistics.writeFailures > 0)
        #expect(relaunched.statistics.bufferedInMemory == 5)
        #expect(await relaunched.eventsInCurrentSession().suffix(5).map(\.name) == Array(repeating: "during", count: 5))
        await #expect(throws: FileError.self) { try await relaunched.flush() }

        // The disk accepts writes again.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: path + ".saved", toPath: path)
        #expect(await eventually { relaunched.statistics.bufferedInMemory == 0 })
        relaunched.record("after")
        try await relaunched.flush()
        let names = try fixture.lines(of: session).dropLast().map { try Event(jsonLine: $0).name }
        #expect(names == ["before"] + Array(repeating: "during", count: 5) + ["after"])
    }

    @Test func anUnwritableDirectoryIsAnErrorNotACrash() async throws {
        let directory = try TemporaryDirectory()
        // A file where the users folder should be: every mkdir under it fails, even as root.
        #expect(FileManager.default.createFile(atPath: directory.path + "/users", contents: Data("x".utf8)))
        var configuration = EventRecorderConfiguration()
        configuration.retryInterval = 0.02
        configuration.memoryBufferBytes = 600
        let recorder = EventRecorder(directory: directory.url, configuration: configuration)
        for index in 0..<10 { recorder.record("e", properties: ["i": .int(index)]) }
        let statistics = recorder.statistics
        #expect(statistics.recorded == 10)
        #expect(statistics.writeFailures >= 1)
        #expect(statistics.droppedFromBuffer > 0, "the memory buffer is bounded")
        #expect(statistics.bufferedInMemory + statistics.droppedFromBuffer == 10)
        let kept = statistics.bufferedInMemory

        try FileManager.default.removeItem(atPath: directory.path + "/users")
        #expect(await eventually { recorder.statistics.bufferedInMemory == 0 })
        let stored = await recorder.allEvents().compactMap { $0.properties["i"]?.intValue }
        #expect(stored == Array((10 - kept)..<10), "the newest events were kept, in order")
    }
}

/// Runs `body` on `count` threads of its own and waits for all of them without blocking the
/// test runner's threads.
func onOwnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let remaining = Locked(count)
        for index in 0..<count {
            Thread {
                body(index)
                if remaining.withLock({ value -> Bool in
                    value -= 1
                    return value == 0
                }) {
                    continuation.resume()
                }
            }.start()
        }
    }
}
