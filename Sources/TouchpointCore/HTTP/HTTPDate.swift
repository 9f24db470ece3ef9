import Foundation

/// HTTP-dates (RFC 9110 §5.6.7), as in `Retry-After`, `Date` and `Last-Modified`.
///
/// ``format(_:)`` writes the preferred IMF-fixdate form, `Sun, 06 Nov 1994 08:49:37 GMT`;
/// ``parse(_:now:)`` also reads the two obsolete forms every recipient must accept,
/// `Sunday, 06-Nov-94 08:49:37 GMT` and `Sun Nov  6 08:49:37 1994`. Parsing is by hand, so
/// it never depends on the device's locale or calendar.
public enum HTTPDate {
    private static let monthNames = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]
    private static let dayNames = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday

    /// The IMF-fixdate form of `date`, in GMT, to the second.
    public static func format(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civil(fromDays: days)
        let weekday = dayNames[Int(((days % 7) + 7) % 7)]
        let monthName = monthNames[month - 1].prefix(1).uppercased() + monthNames[month - 1].dropFirst()
        return "\(weekday), \(pad(day)) \(monthName) \(year) "
            + "\(pad(secondOfDay / 3600)):\(pad(secondOfDay / 60 % 60)):\(pad(secondOfDay % 60)) GMT"
    }

    /// Reads an HTTP-date in any of its three forms.
    /// - Parameters:
    ///   - text: the header value.
    ///   - now: the reference for two-digit years: a year that would lie more than 50 years
    ///     ahead of `now` is taken from the previous century, as RFC 9110 requires.
    /// - Returns: the instant, or nil when `text` is not an HTTP-date.
    public static func parse(_ text: String, now: Date = Date()) -> Date? {
        let tokens = tokenize(text)
        guard let tokens, tokens.count >= 7 else { return nil }
        var year: Int
        let month: Int
        let day: Int
        let time: ArraySlice<Token>
        if tokens.count == 8, case .word(let zone) = tokens[7], zone.lowercased() == "gmt",
            case .word = tokens[0], case .number(let dayValue, _) = tokens[1],
            case .word(let monthName) = tokens[2], case .number(let yearValue, let yearDigits) = tokens[3],
            let monthIndex = monthNumber(monthName)
        {
            // IMF-fixdate (4-digit year) or RFC 850 (2-digit year).
            guard yearDigits == 4 || yearDigits == 2 else { return nil }
            day = dayValue
            month = monthIndex
            year = yearValue
            if yearDigits == 2 {
                let currentYear = civil(fromDays: Int64(now.timeIntervalSince1970 / 86_400)).year
                year += (currentYear / 100) * 100
                if year > currentYear + 50 { year -= 100 }
            }
            time = tokens[4..<7]
        } else if tokens.count == 7, case .word = tokens[0], case .word(let monthName) = tokens[1],
            case .number(let dayValue, _) = tokens[2], case .number(let yearValue, 4) = tokens[6],
            let monthIndex = monthNumber(monthName)
        {
            // asctime: `Sun Nov  6 08:49:37 1994`.
            day = dayValue
            month = monthIndex
            year = yearValue
            time = tokens[3..<6]
        } else {
            return nil
        }
        guard case .number(let hour, _) = time[time.startIndex],
            case .number(let minute, _) = time[time.startIndex + 1],
            case .number(let second, _) = time[time.startIndex + 2],
            hour < 24, minute < 60, second < 61, day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + Int64(hour * 3600 + minute * 60 + second)))
    }

    private enum Token {
        case word(String)
        case number(Int, digits: Int)
    }

    /// Splits `text` into words and numbers; separators are spaces, commas, dashes and colons.
    /// Anything else makes the text unreadable.
    private static func tokenize(_ text: String) -> [Token]? {
        var tokens: [Token] = []
        var current = ""
        var isNumber = false
        func flush() -> Bool {
            defer { current = "" }
            guard !current.isEmpty else { return true }
            if isNumber {
                guard current.count <= 4, let value = Int(current) else { return false }
                tokens.append(.number(value, digits: current.count))
            } else {
                tokens.append(.word(current))
            }
            return true
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "0"..."9":
                if !current.isEmpty && !isNumber { return nil }
                isNumber = true
                current.unicodeScalars.append(scalar)
            case "a"..."z", "A"..."Z":
                if !current.isEmpty && isNumber { return nil }
                isNumber = false
                current.unicodeScalars.append(scalar)
            case " ", ",", "-", ":", "\t":
                guard flush() else { return nil }
            default:
                return nil
            }
            if tokens.count > 8 { return nil }
        }
        guard flush() else { return nil }
        return tokens
    }

    private static func monthNumber(_ name: String) -> Int? {
        monthNames.firstIndex(of: name.lowercased()).map { $0 + 1 }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let shiftedYear = Int64(month <= 2 ? year - 1 : year)
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let monthIndex = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * monthIndex + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01.
    private static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        let month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        let year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
