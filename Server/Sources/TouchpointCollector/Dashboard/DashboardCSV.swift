import Foundation

/// A dashboard table as CSV (RFC 4180): what `?format=csv` on a page answers.
///
/// Values that clients sent (user ids, property values) could be read by a spreadsheet as a
/// formula; a cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return gets a `'` in
/// front, so it stays text.
struct DashboardCSV: Sendable, Hashable {
    /// The file's name, without `.csv`.
    var name: String
    var header: [String]
    var rows: [[String]]

    var text: String {
        ([header] + rows).map { $0.map(Self.cell).joined(separator: ",") }.joined(separator: "\r\n") + "\r\n"
    }

    static func cell(_ value: String) -> String {
        var text = value
        if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first),
            Double(text) == nil
        {
            text = "'" + text
        }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
