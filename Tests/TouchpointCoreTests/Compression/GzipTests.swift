import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

struct GzipTests {
    static func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = SeededRandomNumberGenerator(seed: seed)
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    static let json = Array(
        String(repeating: #"{"type":"track","event":"checkout","properties":{"amount":120}},"#, count: 500).utf8)

    @Test(arguments: [0, 1, 100, 65_536, 1_000_003])
    func randomBytesRoundTrip(size: Int) throws {
        let original = Self.randomBytes(size, seed: UInt64(size))
        let packed = try Gzip.compress(original)
        #expect(Gzip.isGzip(packed))
        #expect(try Gzip.decompress(packed) == original)
    }

    @Test(arguments: [Gzip.Level.fastest, .balanced, .smallest])
    func jsonShrinksAtEveryLevel(level: Gzip.Level) throws {
        let packed = try Gzip.compress(Self.json, level: level)
        #expect(packed.count * 5 < Self.json.count)
        #expect(try Gzip.decompress(packed) == Self.json)
    }

    @Test func concatenatedMembersDecodeToTheConcatenation() throws {
        let first = Array("first part,".utf8)
        let second = Array("second part".utf8)
        let joined = try Gzip.compress(first) + Gzip.compress(second)
        #expect(try Gzip.decompress(joined) == first + second)
    }

    @Test func theSystemGzipToolReadsOurOutputAndWeReadItsOutput() throws {
        let directory = try TemporaryDirectory(prefix: "gzip")
        let ours = directory.appending("ours.gz")
        try Data(Gzip.compress(Self.json)).write(to: ours)
        #expect(try Self.run("/usr/bin/gzip", ["-dc", ours.path]) == Data(Self.json))

        let plain = directory.appending("theirs.json")
        try Data(Self.json).write(to: plain)
        let theirs = try Self.run("/usr/bin/gzip", ["-9c", plain.path])
        #expect(try Gzip.decompress([UInt8](theirs)) == Self.json)
    }

    @Test func corruptTruncatedAndTrailingDataAreInvalid() throws {
        let packed = try Gzip.compress(Self.json)
        var corrupt = packed
        corrupt[packed.count / 2] ^= 0xFF
        #expect { try Gzip.decompress(corrupt) } throws: { ($0 as? CompressionError)?.code == .invalidData }
        let truncated = Array(packed.prefix(packed.count - 10))
        #expect { try Gzip.decompress(truncated) } throws: { ($0 as? CompressionError)?.code == .invalidData }
        #expect { try Gzip.decompress(packed + [1, 2, 3]) } throws: { ($0 as? CompressionError)?.code == .invalidData }
        #expect { try Gzip.decompress(Array("not gzip at all".utf8)) } throws: {
            ($0 as? CompressionError)?.code == .invalidData
        }
        #expect { try Gzip.decompress([]) } throws: { ($0 as? CompressionError)?.code == .invalidData }
    }

    @Test func outputBeyondTheLimitIsRefusedBeforeItIsProduced() throws {
        let bomb = try Gzip.compress([UInt8](repeating: 0, count: 10 << 20), level: .smallest)
        #expect(bomb.count < 20_000)
        #expect { try Gzip.decompress(bomb, maximumSize: 1 << 20) } throws: {
            ($0 as? CompressionError)?.code == .tooLarge
        }
        #expect(try Gzip.decompress(bomb, maximumSize: 10 << 20).count == 10 << 20)
    }

    @Test func randomInputNeverCrashes() {
        for seed in UInt64(0)..<200 {
            var bytes = Self.randomBytes(Int(seed % 64) + 1, seed: seed)
            if seed % 2 == 0 { bytes.insert(contentsOf: [0x1f, 0x8b, 8, 0], at: 0) }
            _ = try? Gzip.decompress(bytes, maximumSize: 1 << 16)
        }
        #expect(!Gzip.isGzip([0x1f]))
    }

    /// Runs a tool and returns what it wrote (through a file: its output is binary).
    static func run(_ tool: String, _ arguments: [String]) throws -> Data {
        let directory = try TemporaryDirectory(prefix: "gzip-tool")
        let output = directory.appending("output")
        let child = try SpawnedProcess(URL(fileURLWithPath: tool), arguments, output: .file(output.path))
        #expect(child.waitUntilExit() == .exited(0))
        return try Data(contentsOf: output)
    }
}
