import Foundation
import Testing
import TouchpointCore

struct TimestampTests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (1_767_225_600.123, "2026-01-01T00:00:00.123Z"),
        (951_782_400, "2000-02-29T00:00:00.000Z"),
        (-1.5, "1969-12-31T23:59:58.500Z"),
        (4_102_444_799.999, "2099-12-31T23:59:59.999Z"),
    ])
    func formats(seconds: Double, text: String) {
        #expect(Timestamp.format(Date(timeIntervalSince1970: seconds)) == text)
        #expect(Timestamp.parse(text) == Timestamp.millisecondAligned(Date(timeIntervalSince1970: seconds)))
    }

    @Test func matchesFoundationsFormatterOnRandomDates() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var generator = UUIDv7Generator(seed: 3)
        for _ in 0..<2_000 {
            let milliseconds = Int64(generator.nextRandom() % 4_000_000_000_000)
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            #expect(Timestamp.format(date) == formatter.string(from: date))
            #expect(Timestamp.parse(Timestamp.format(date)) == date)
        }
    }

    @Test(arguments: [
        ("2026-11-22T09:41:07Z", 1_795_340_467.0),
        ("2026-11-22T09:41:07.5Z", 1_795_340_467.5),
        ("2026-11-22T11:41:07+02:00", 1_795_340_467.0),
        ("2026-11-22t09:41:07z", 1_795_340_467.0),
        ("2026-11-22T09:41:07.123456789Z", 1_795_340_467.123456789),
    ])
    func parsesRFC3339Variants(text: String, seconds: Double) throws {
        let date = try #require(Timestamp.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_001)
    }

    @Test(arguments: [
        "", "2026-11-22", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-22T24:00:00Z",
        "2026-11-22T09:41:07", "2026-11-22T09:41:07.Z", "2026-11-22T09:41:07Zjunk", "garbage",
    ])
    func rejectsMalformedText(text: String) {
        #expect(Timestamp.parse(text) == nil)
    }
}
