import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

#if canImport(Glibc)
import Glibc
#endif

struct MappedLogFileTests {
    /// `count` distinct records of various lengths, each a JSON Lines line.
    static func records(_ count: Int, from start: Int = 0) -> [[UInt8]] {
        (start..<(start + count)).map { index in
            Array("{\"index\":\(index),\"pad\":\"\(String(repeating: "p", count: index * 37 % 211))\"}\n".utf8)
        }
    }

    static func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    @Test func appendsAreCopiesAndACloseLeavesExactlyTheRecords() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/events.jsonl"
        let records = Self.records(500)
        let log = try MappedLogFile.open(path: path)
        // The growth queue allocates the first space off this thread (until then appends write).
        #expect(await eventually { Self.size(path) > 0 })
        for record in records { try log.append(record) }
        #expect(log.committedLength == Int64(records.joined().count))
        #expect(MappedLogFile.committedLength(ofFileAt: path) == log.committedLength)
        // While open, the records are in the file, followed by space allocated for more.
        let open = try Self.bytes(path)
        #expect(Array(open.prefix(records.joined().count)) == Array(records.joined()))
        #expect(open.dropFirst(records.joined().count).allSatisfy { $0 == 0 })
        #expect(log.statistics.mappedAppends > 0, "appends went through the mapping")
        #expect(try log.lastRecord() == Array(records.last!.dropLast()))
        try log.sync()
        log.close()
        #expect(try Self.bytes(path) == Array(records.joined()))
        #expect(MappedLogFile.committedLength(ofFileAt: path) == nil, "closed: no longer open in this process")
        #expect(throws: FileError.self) { try log.append(records[0]) }
    }

    @Test func everyOpenerInAProcessSharesOneFileAndAnotherProcessIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/events.jsonl"
        let first = try MappedLogFile.open(path: path)
        try first.append(Array("{\"a\":1}\n".utf8))
        let second = try MappedLogFile.open(path: path)
        #expect(first === second)
        // Another open file description (as another process has) cannot take the lock.
        let other = open(path, O_RDWR)
        defer { close(other) }
        #expect(flock(other, LOCK_EX | LOCK_NB) != 0)
        first.close()
        #expect(flock(other, LOCK_EX | LOCK_NB) == 0, "a closed log lets other writers in")
    }

    /// What a kill leaves: the last record cut at any byte, then the zeros of allocated space.
    /// Opening cuts exactly the torn record, and appending goes on from the last whole one.
    @Test(arguments: [false, true])
    func recoveryCutsTheLastRecordAtEveryByte(allocatedSpaceFollows: Bool) throws {
        let directory = try TemporaryDirectory()
        let records = Self.records(12)
        let whole = Array(records.dropLast().joined())
        let last = records.last!
        let next = Array("{\"next\":true}\n".utf8)
        for cut in 0...last.count {
            let path = directory.path + "/cut-\(cut).jsonl"
            var content = whole + last.prefix(cut)
            if allocatedSpaceFollows { content += [UInt8](repeating: 0, count: 3 * MappedLogFile.pageSize + 17) }
            try Data(content).write(to: URL(fileURLWithPath: path))

            let log = try MappedLogFile.open(path: path)
            let complete = cut == last.count
            #expect(log.committedLength == Int64(whole.count + (complete ? last.count : 0)), "cut at \(cut)")
            #expect(log.repairedBytes == (complete ? 0 : Int64(cut)), "cut at \(cut)")
            try log.append(next)
            log.close()
            #expect(try Self.bytes(path) == whole + (complete ? last : []) + next, "cut at \(cut)")
        }
    }

    @Test func recordsCrossSegmentsByRotation() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/events.jsonl"
        let records = Self.records(3_000)
        let options = MappedLogFile.Options(segmentBytes: 2 * MappedLogFile.pageSize, growthBytes: 3 * 4096)
        let log = try MappedLogFile.open(path: path, options: options)
        try log.reserve(records.joined().count)
        for record in records { try log.append(record) }
        #expect(log.statistics.rotations > 10)
        #expect(log.statistics.writtenAppends == 0, "all copies into reserved space")
        log.close()
        #expect(try Self.bytes(path) == Array(records.joined()))
        // Reopened, it continues where it ended.
        let reopened = try MappedLogFile.open(path: path, options: options)
        let more = Self.records(10, from: 3_000)
        for record in more { try reopened.append(record) }
        reopened.close()
        #expect(try Self.bytes(path) == Array((records + more).joined()))
    }

    /// The growth step maps the next segment ahead of the appender, so a rotation into it makes
    /// no system call on the appending thread; the records stay exact across such rotations.
    @Test func rotationsGoIntoSegmentsMappedAhead() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/events.jsonl"
        let records = Self.records(3_000)
        let options = MappedLogFile.Options(segmentBytes: 4 * MappedLogFile.pageSize, growthBytes: 4096)
        let log = try MappedLogFile.open(path: path, options: options)
        try log.append(records[0])  // maps the first segment
        #expect(log.isMapped)
        try log.reserve(records.joined().count)  // allocates the rest and maps the next segment
        for record in records.dropFirst() { try log.append(record) }
        #expect(log.statistics.preparedRotations >= 1)
        #expect(log.statistics.rotations >= log.statistics.preparedRotations)
        #expect(log.statistics.writtenAppends == 0, "all copies into reserved space")
        log.close()
        #expect(try Self.bytes(path) == Array(records.joined()))
    }

    @Test func withoutAMappingEveryAppendIsAWrite() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/events.jsonl"
        let log = try MappedLogFile.open(path: path, options: MappedLogFile.Options(mapsFile: false))
        let records = Self.records(50)
        for record in records { try log.append(record) }
        #expect(!log.isMapped)
        #expect(log.statistics.writtenAppends == 50)
        #expect(try Self.bytes(path) == Array(records.joined()), "no allocated space: the file is exact while open")
    }

    @Test func concurrentAppendsFromManyThreadsStayWhole() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/events.jsonl"
        let log = try MappedLogFile.open(
            path: path, options: MappedLogFile.Options(segmentBytes: 4 * MappedLogFile.pageSize, growthBytes: 8192))
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    await onOwnThread {
                        for index in 0..<2_000 {
                            try? log.append(Array("{\"t\":\(thread),\"i\":\(index)}\n".utf8))
                        }
                    }
                }
            }
        }
        log.close()
        let lines = String(decoding: try Self.bytes(path), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 8_000)
        for thread in 0..<4 {
            let indexes = lines.filter { $0.hasPrefix("{\"t\":\(thread),") }.map {
                Int($0.split(separator: ":").last!.dropLast())!
            }
            #expect(indexes == Array(0..<2_000))
        }
    }

    #if os(Linux)
    /// A full disk is an error, never a `SIGBUS`: the growth queue cannot allocate, appends fall
    /// back to `pwrite` until that fails too, and recording resumes when space returns.
    @Test(.enabled(if: SmallVolume.canMount || SmallVolume.isRequired))
    func aFullDiskIsAnErrorAndAppendsResumeWhenSpaceReturns() throws {
        let volume = try SmallVolume(bytes: 256 * 1024)
        let ballast = volume.path + "/ballast"
        try Data(count: 64 * 1024).write(to: URL(fileURLWithPath: ballast))
        let path = volume.path + "/events.jsonl"
        let log = try MappedLogFile.open(path: path, options: MappedLogFile.Options(growthBytes: 16 * 1024))
        var appended: [[UInt8]] = []
        var records = Self.records(100_000)[...]
        func appendUntilFull() -> FileError? {
            while let record = records.first {
                do {
                    try log.append(record)
                } catch {
                    return error
                }
                appended.append(record)
                records.removeFirst()
            }
            return nil
        }
        let failure = appendUntilFull()
        #expect(failure?.isOutOfSpace == true, "\(String(describing: failure))")
        #expect(appended.count > 100)
        #expect(log.committedLength == Int64(appended.joined().count))
        let before = appended.count

        // Space returns: the same log takes records again, through the mapping once the growth
        // queue can allocate.
        try FileManager.default.removeItem(atPath: ballast)
        #expect(appendUntilFull()?.isOutOfSpace == true)
        #expect(appended.count > before + 100)
        log.close()
        #expect(try Self.bytes(path) == Array(appended.joined()), "nothing committed was lost")
    }
    #endif
}
