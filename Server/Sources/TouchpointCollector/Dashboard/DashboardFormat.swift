import Foundation
import TouchpointCore

/// How the dashboard writes numbers, times and values.
enum DashboardFormat {
    /// `2026-11-22 09:41:07` (UTC).
    static func time(_ date: Date) -> String {
        let text = Timestamp.format(date)  // 2026-11-22T09:41:07.123Z
        return String(text.prefix(19)).replacingOccurrences(of: "T", with: " ")
    }

    /// `09:41` (UTC).
    static func minute(_ date: Date) -> String {
        String(Timestamp.format(date).dropFirst(11).prefix(5))
    }

    /// `300,000`: a count with thousands separators.
    static func number(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return value < 0 ? "-" + grouped : grouped
    }

    /// `1,234.57`: a value with thousands separators and at most two decimals; `–` when there is
    /// none.
    static func number(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "–" }
        let hundredths = (value * 100).rounded()
        guard abs(hundredths) < 9e17 else { return String(value) }
        let whole = Int(hundredths / 100)
        let fraction = Int(abs(hundredths).truncatingRemainder(dividingBy: 100))
        let sign = hundredths < 0 && whole == 0 ? "-" : ""
        guard fraction != 0 else { return sign + number(whole) }
        let decimals = fraction % 10 == 0 ? String(fraction / 10) : (fraction < 10 ? "0\(fraction)" : String(fraction))
        return sign + number(whole) + "." + decimals
    }

    /// `42.9 %`, or `–` when there is no rate.
    static func percent(_ rate: Double?) -> String {
        guard let rate, rate.isFinite else { return "–" }
        return String(format: "%.1f %%", rate * 100)
    }

    /// A property value: strings as they are, everything else as compact JSON.
    static func value(_ value: JSONValue) -> String {
        if case .string(let text) = value { return text }
        return value.jsonString(sortedKeys: true)
    }

    /// The fields of an `application/x-www-form-urlencoded` body (decoded as ``QueryParameters``
    /// decodes a query; a field sent twice keeps its last value, as a form's later field wins).
    /// - Throws: ``CollectorError`` `invalid_parameter` for a field holding a NUL character.
    static func formFields(_ body: String) throws(CollectorError) -> [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in try QueryParameters(body).pairs { fields[name] = value }
        return fields
    }
}
