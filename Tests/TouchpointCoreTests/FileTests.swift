import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

struct FileTests {
    @Test func atomicWriteReplacesWholeAndCreatesDirectories() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/a/b/state.json"
        try AtomicFile.write(Array("first".utf8), to: path)
        try AtomicFile.write(Array("second".utf8), to: path, durable: false)
        #expect(try AtomicFile.read(path) == Array("second".utf8))
        #expect(try AtomicFile.read(directory.path + "/missing") == nil)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/a/b")
        #expect(leftovers == ["state.json"])
    }

    @Test func atomicWriteReportsWhereItFailed() throws {
        let directory = try TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: directory.path + "/file", contents: nil))
        #expect {
            try AtomicFile.write([1], to: directory.path + "/file/child.json")
        } throws: { error in
            (error as? FileError)?.description.contains("/file") == true
        }
        #expect {
            try AtomicFile.write([1], to: "/dev/full/x")
        } throws: { error in error is FileError }
    }

    /// Content written in parts and read into a buffer of the caller's: whole, in order, and a
    /// failure part-way through a write leaves the file as it was.
    @Test func atomicWriteInPartsAndReadIntoPlace() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/parts.bin"
        let parts: [[UInt8]] = [Array("head".utf8), [], Array(repeating: 7, count: 100_000), Array("tail".utf8)]
        try AtomicFile.write(to: path, mode: 0o600) { (append) throws(FileError) in
            for part in parts {
                try part.withUnsafeBytes { raw in Result { () throws(FileError) in try append(raw) } }.get()
            }
        }
        #expect(try AtomicFile.read(path) == parts.flatMap { $0 })
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let read = try AtomicFile.read(path) { size, reader in
            var head = [UInt8](repeating: 0, count: 4)
            try head.withUnsafeMutableBytes { try reader.fill($0) }
            var rest = [UInt8](repeating: 0, count: size - 4)
            try rest.withUnsafeMutableBytes { try reader.fill($0) }
            // Past the end: an error naming the file, not a short read.
            var past = [UInt8](repeating: 0, count: 1)
            #expect {
                try past.withUnsafeMutableBytes { try reader.fill($0) }
            } throws: { error in (error as? FileError)?.path == path }
            return (size, head, rest)
        }
        let (size, head, rest) = try #require(read)
        #expect(size == 100_008 && head == Array("head".utf8) && rest == Array(parts.joined().dropFirst(4)))
        #expect(try AtomicFile.read(directory.path + "/missing") { size, _ in size } == nil)
        #expect {
            try AtomicFile.write(to: path) { (append) throws(FileError) in
                try [1, 2].withUnsafeBytes { raw in Result { () throws(FileError) in try append(raw) } }.get()
                throw FileError(operation: "write", path: path, code: EIO)
            }
        } throws: { error in error is FileError }
        #expect(try AtomicFile.read(path) == parts.flatMap { $0 })
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["parts.bin"])
    }

    @Test func appendOnlyFileCutsATornTailAndRollsBackFailedAppends() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/log.jsonl"
        try Data("{\"a\":1}\n{\"b\":".utf8).write(to: URL(fileURLWithPath: path))
        let file = try AppendOnlyFile(path: path)
        #expect(file.repairedBytes == 5)
        #expect(file.length == 8)
        try file.append(Array("{\"c\":3}\n".utf8))
        try file.sync()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"a\":1}\n{\"c\":3}\n")
        #expect(try file.lastRecord() == Array("{\"c\":3}".utf8))
        let noNewline = try AppendOnlyFile(path: directory.path + "/none")
        #expect(try noNewline.lastRecord() == nil)
    }

    @Test func appendToAFullDeviceIsAnOutOfSpaceError() throws {
        let file = try AppendOnlyFile(path: "/dev/full")
        #expect {
            try file.append(Array("x\n".utf8))
        } throws: { error in (error as? FileError)?.isOutOfSpace == true }
    }

    @Test(arguments: [1, 2, 3, 7, 64, 4096])
    func lineReaderHandlesEveryChunkBoundary(chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/lines.jsonl"
        let lines = ["", "a", "bb", String(repeating: "c", count: 100), "d", String(repeating: "e", count: 3), ""]
        try Data((lines.joined(separator: "\n") + "tail").utf8).write(to: URL(fileURLWithPath: path))
        var seen: [(String, Bool, Bool)] = []
        var offsets: [Int64] = []
        let reader = JSONLinesReader(path: path, maximumLineLength: 50, chunkSize: chunkSize)
        let end = try reader.forEachLine { line in
            seen.append((String(decoding: line.bytes, as: UTF8.self), line.isComplete, line.isOversized))
            offsets.append(line.offset)
            return true
        }
        #expect(seen.map(\.0) == ["", "a", "bb", "", "d", "eee", "tail"])
        #expect(seen.map(\.2) == [false, false, false, true, false, false, false])
        #expect(seen.last?.1 == false)
        #expect(offsets == [0, 1, 3, 6, 107, 109, 113])
        #expect(end == 113, "resume before the unterminated tail")
        var resumed: [String] = []
        try reader.forEachLine(from: 107) { line in
            resumed.append(String(decoding: line.bytes, as: UTF8.self))
            return line.isComplete
        }
        #expect(resumed == ["d", "eee", "tail"])
    }

    @Test func lineReaderRefusesDevices() {
        #expect(throws: FileError.self) { try JSONLinesReader(path: "/dev/zero").forEachLine { _ in true } }
    }

    @Test func stableHashIsStable() {
        #expect(StableHash.fnv1a("") == 0xCBF2_9CE4_8422_2325)
        #expect(StableHash.hex(of: "a") == "af63dc4c8601ec8c")
        let samples = (0..<10_000).map { StableHash.unitInterval("survey:user-\($0)") }
        #expect(samples.allSatisfy { $0 >= 0 && $0 < 1 })
        let share = Double(samples.filter { $0 < 0.3 }.count) / Double(samples.count)
        #expect(abs(share - 0.3) < 0.03)
    }

    @Test func uuidV7IsTimeOrderedAndVersioned() {
        var generator = UUIDv7Generator()
        let early = generator.next(at: Date(timeIntervalSince1970: 1_000))
        let late = generator.next(at: Date(timeIntervalSince1970: 1_001))
        #expect(early.uuidString < late.uuidString)
        #expect(Array(early.uuidString)[14] == "7")
        var bytes: [UInt8] = []
        late.appendString(to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == late.uuidString)
    }

    @Test func jsonPathsDescribeLocations() {
        let path = JSONPath.root.appending("surveys").appending(index: 1).appending("trigger").appending("pt-BR")
        #expect(path.description == #"surveys[1].trigger["pt-BR"]"#)
        #expect(JSONPath.root.description == "$")
        #expect(JSONProblem(path: path, message: "bad").description == #"surveys[1].trigger["pt-BR"]: bad"#)
    }
}

struct UUIDParsingTests {
    @Test func parsesWhatFoundationParses() {
        for _ in 0..<1_000 {
            let id = UUID()
            #expect(UUID.parse(id.uuidString) == id)
            #expect(UUID.parse(id.uuidString.lowercased()) == id)
        }
    }

    @Test(arguments: [
        "", "not-a-uuid", "01A200B8-7FCA-7C09-B0CB-4E61F901C12", "01A200B8-7FCA-7C09-B0CB-4E61F901C12AX",
        "01A200B87FCA-7C09-B0CB-4E61F901C12AX", "01A200B8-7FCA-7C09-B0CB+4E61F901C12A",
        "G1A200B8-7FCA-7C09-B0CB-4E61F901C12A",
    ])
    func rejectsMalformedText(text: String) {
        #expect(UUID.parse(text) == nil)
        #expect(UUID(uuidString: text) == nil)
    }
}
