#if os(Linux)
import Foundation
import Testing
import TouchpointEvents
import TouchpointTesting

/// A full disk, for real: the recorder's directory on a small tmpfs that fills up. The log is
/// written through a memory mapping, where touching space the file system could not back would
/// kill the app with SIGBUS; here the app keeps running, events wait in memory, and recording
/// resumes on disk when space returns.
struct FullDiskTests {
    @Test(.enabled(if: SmallVolume.canMount || SmallVolume.isRequired))
    func theAppKeepsRunningAndRecordingResumesWhenSpaceReturns() async throws {
        let volume = try SmallVolume(bytes: 512 * 1024)
        let ballast = volume.path + "/ballast"
        try Data(count: 128 * 1024).write(to: URL(fileURLWithPath: ballast))
        var configuration = EventRecorderConfiguration()
        configuration.retryInterval = 0.05
        configuration.memoryBufferBytes = 4 << 20
        configuration.logFile.growthBytes = 64 * 1024
        let recorder = EventRecorder(
            directory: URL(fileURLWithPath: volume.path + "/log"), configuration: configuration)
        let padding = String(repeating: "x", count: 200)

        // Record until the disk refuses, and well past it.
        var recorded: [UUID] = []
        var index = 0
        while recorder.statistics.writeFailures == 0 && index < 100_000 {
            recorded.append(
                try #require(recorder.record("fill", properties: ["i": .int(index), "pad": .string(padding)])).id)
            index += 1
        }
        #expect(recorder.statistics.writeFailures > 0, "the disk filled up after \(index) events")
        // 200 events of about 320 bytes: half of what the ballast gives back.
        for _ in 0..<200 {
            recorded.append(
                try #require(recorder.record("fill", properties: ["i": .int(index), "pad": .string(padding)])).id)
            index += 1
        }
        #expect(recorder.statistics.bufferedInMemory > 0)
        #expect(volume.freeBytes < 8192)

        // Space returns: the buffered events reach the disk, and new ones go straight there.
        try FileManager.default.removeItem(atPath: ballast)
        #expect(await eventually { recorder.statistics.bufferedInMemory == 0 })
        recorded.append(try #require(recorder.record("after")).id)
        #expect(recorder.statistics.droppedFromBuffer == 0)
        let stored = await recorder.allEvents().map(\.id)
        let same = stored == recorded
        #expect(same, "every event, once, in order (\(stored.count) stored of \(recorded.count))")
    }
}
#endif
