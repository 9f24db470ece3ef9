import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

/// The record path encodes lines its own fast way; what lands on disk must be, byte for byte,
/// `Event.jsonLine()` of the event `record` returned, for any name, properties, user and time.
struct LineEncodingTests {
    struct Random {
        var generator: UUIDv7Generator

        mutating func int(_ bound: Int) -> Int { Int(generator.nextRandom() % UInt64(bound)) }

        mutating func text() -> String {
            let pieces = [
                "a", "Home", "ü", "😀", "\"", "\\", "\n", "\t", "\u{1}", "\u{1F}", "/", " ", "0", "é€", "\u{7F}",
            ]
            return (0..<int(6)).map { _ in pieces[int(pieces.count)] }.joined()
        }

        mutating func value(depth: Int = 0) -> EventValue {
            switch int(depth > 2 ? 5 : 7) {
            case 0: return .null
            case 1: return .bool(int(2) == 0)
            case 2: return .int([0, 7, -1, 42, Int.max, Int.min, 1_234_567][int(7)])
            case 3: return .double([0.5, -2.25, 1e300, 3.14159, .infinity, .nan, 0.1][int(7)])
            case 4: return .string(text())
            case 5: return .array((0..<int(4)).map { _ in value(depth: depth + 1) })
            default: return .object(properties(depth: depth + 1))
            }
        }

        mutating func properties(depth: Int = 0) -> [String: EventValue] {
            var members: [String: EventValue] = [:]
            for _ in 0..<int(5) { members[text()] = value(depth: depth) }
            return members
        }
    }

    @Test(arguments: [1, 2, 3])
    func linesOnDiskAreTheEventsExactly(seed: UInt64) async throws {
        // No session ends by itself: the clock jumps whole days.
        let fixture = try RecorderFixture { $0.sessionTimeout = 1e9 }
        var random = Random(generator: UUIDv7Generator(seed: seed))
        var expected: [UInt8] = []
        var sessions: [EventSession] = []
        for round in 0..<8 {
            let user = round % 3 == 0 ? nil : "user \(random.text())"
            sessions.append(await fixture.recorder.startSession(userID: user))
            for _ in 0..<150 {
                // Across milliseconds, seconds and days.
                fixture.clock.advance(by: [0.0004, 0.001, 0.37, 1, 86_399.999][random.int(5)])
                let type: EventType = [.track, .identify, .screen, EventType(rawValue: "al\"ias")][random.int(4)]
                let event = try #require(
                    fixture.recorder.record(random.text(), properties: random.properties(), type: type))
                expected += event.jsonLine()
            }
        }
        await fixture.recorder.endSession()
        var stored: [UInt8] = []
        for session in sessions {
            stored += Array(try Data(contentsOf: URL(fileURLWithPath: fixture.eventsFile(session))))
        }
        let firstDifference =
            (0..<min(stored.count, expected.count)).first { stored[$0] != expected[$0] }
            ?? min(stored.count, expected.count)
        let same = stored.count == expected.count && firstDifference == stored.count
        #expect(
            same,
            "first difference at byte \(firstDifference) of \(expected.count): \(String(decoding: stored.dropFirst(max(0, firstDifference - 80)).prefix(160), as: UTF8.self))"
        )
    }

    @Test func timesBeforeTheEpochAreWrittenAsTheReaderReadsThem() async throws {
        let fixture = try RecorderFixture()
        fixture.clock.set(Date(timeIntervalSince1970: -1.5))
        let event = try #require(fixture.recorder.record("old"))
        let session = try #require(await fixture.recorder.currentSession())
        await fixture.recorder.endSession()
        let line = try Data(contentsOf: URL(fileURLWithPath: fixture.eventsFile(session)))
        #expect(Array(line) == event.jsonLine())
        #expect(String(decoding: line, as: UTF8.self).contains("\"1969-12-31T23:59:58.500Z\""))
    }
}
