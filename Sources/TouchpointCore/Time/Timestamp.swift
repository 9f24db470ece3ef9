import Foundation

/// ISO-8601 timestamps with milliseconds in UTC (`2026-11-22T09:41:07.123Z`), written and read
/// without `ISO8601DateFormatter`, which is too slow for the record path.
public enum Timestamp {
    /// `date` rounded to the nearest millisecond: the precision a timestamp keeps on disk, so an
    /// event read back compares equal to the one recorded.
    public static func millisecondAligned(_ date: Date) -> Date {
        Self.date(milliseconds: milliseconds(date))
    }

    /// Milliseconds since 1970-01-01T00:00:00Z, rounded to the nearest.
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The date `milliseconds` after 1970-01-01T00:00:00Z (the inverse of ``milliseconds(_:)``).
    public static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Formats `date` as `YYYY-MM-DDTHH:MM:SS.sssZ` (UTC, rounded to the nearest millisecond).
    public static func format(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `date` as `YYYY-MM-DDTHH:MM:SS.sssZ` to a byte buffer.
    public static func append(_ date: Date, to bytes: inout [UInt8]) {
        let (days, millisecondOfDay) = floorDivide(milliseconds(date), 86_400_000)
        let (year, month, day) = civilDate(fromDays: days)
        let secondOfDay = Int(millisecondOfDay / 1000)
        appendDigits(year, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(month, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(day, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3600, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDigits(Int(millisecondOfDay % 1000), width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Parses an RFC 3339 timestamp: `2026-11-22T09:41:07Z`, `…07.123456Z`, `…07+02:00`.
    /// - Returns: the instant, or nil when the text is not such a timestamp.
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    /// Parses an RFC 3339 timestamp from UTF-8 bytes.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var index = 0
        func number(_ width: Int) -> Int? {
            guard bytes.count - index >= width else { return nil }
            var value = 0
            for _ in 0..<width {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                index += 1
            }
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
            let second = number(2)
        else { return nil }
        guard (1...12).contains(month), (1...daysInMonth(year: year, month: month)).contains(day),
            hour < 24, minute < 60, second < 61
        else { return nil }
        var fraction = 0  // nanoseconds
        var fractionDigits = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                if fractionDigits < 9 {
                    fraction = fraction * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                    fractionDigits += 1
                }
                index += 1
            }
            guard fractionDigits > 0 else { return nil }
            for _ in fractionDigits..<9 { fraction *= 10 }
        }
        var offsetSeconds = 0
        guard index < bytes.count else { return nil }
        if expect("Zz") {
            offsetSeconds = 0
        } else if bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let offsetHours = number(2), expect(":"), let offsetMinutes = number(2), offsetHours < 24,
                offsetMinutes < 60
            else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        if fraction % 1_000_000 == 0 {
            // Whole milliseconds: build the date exactly as `millisecondAligned` does.
            return Date(timeIntervalSince1970: Double(seconds * 1000 + fraction / 1_000_000) / 1000)
        }
        return Date(timeIntervalSince1970: Double(seconds) + Double(fraction) / 1e9)
    }

    // MARK: Calendar arithmetic (proleptic Gregorian, UTC)

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int, Int64) {
        var quotient = value / divisor
        var remainder = value % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (Int(quotient), remainder)
    }

    /// Days since 1970-01-01 to a civil date (era-based algorithm; proleptic Gregorian).
    public static func civilDate(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// A civil date to days since 1970-01-01 (proleptic Gregorian).
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let adjustedYear = month <= 2 ? year - 1 : year
        let era = (adjustedYear >= 0 ? adjustedYear : adjustedYear - 399) / 400
        let yearOfEra = adjustedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func appendDigits(_ value: Int, width: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var remaining = max(0, value)
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(remaining / divisor % 10))
            remaining %= divisor
            divisor /= 10
        }
    }
}
