/// A piece of HTML for the dashboard's pages: markup written in the source is kept as is, text
/// interpolated into it is escaped.
///
/// ```swift
/// let name = "<script>"
/// let cell: HTML = "<td class=\"name\">\(name)</td>"   // <td class="name">&lt;script&gt;</td>
/// ```
///
/// Every string that reaches a page goes through ``escape(_:)``, the dashboard's one escaping
/// helper, unless it is itself ``HTML`` (built the same way). It escapes `& < > " '`, so the
/// result is safe in element content and in quoted attribute values.
struct HTML: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The markup.
    private(set) var markup: String

    /// Markup from a literal in the source.
    init(stringLiteral literal: String) { markup = literal }

    init(stringInterpolation: StringInterpolation) { markup = stringInterpolation.markup }

    private init(markup: String) { self.markup = markup }

    /// No markup.
    static let empty = HTML(stringLiteral: "")

    var description: String { markup }

    /// Escapes text for HTML element content and quoted attribute values.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// Plain text as HTML (escaped).
    static func text(_ text: String) -> HTML { HTML(markup: escape(text)) }

    /// Appends `other`.
    static func += (lhs: inout HTML, rhs: HTML) { lhs.markup += rhs.markup }

    /// `lhs` followed by `rhs`.
    static func + (lhs: HTML, rhs: HTML) -> HTML { HTML(markup: lhs.markup + rhs.markup) }

    /// Interpolation: literal segments are markup, values are escaped text (or markup when they are ``HTML``).
    struct StringInterpolation: StringInterpolationProtocol {
        var markup = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            markup.reserveCapacity(literalCapacity + interpolationCount * 16)
        }

        mutating func appendLiteral(_ literal: String) { markup += literal }

        mutating func appendInterpolation(_ text: String) { markup += HTML.escape(text) }

        mutating func appendInterpolation(_ text: Substring) { markup += HTML.escape(String(text)) }

        mutating func appendInterpolation(_ html: HTML) { markup += html.markup }

        mutating func appendInterpolation(_ parts: [HTML]) {
            for part in parts { markup += part.markup }
        }

        mutating func appendInterpolation(_ value: Int) { markup += String(value) }

        mutating func appendInterpolation(_ value: Int64) { markup += String(value) }

        /// A coordinate or size in an SVG attribute: at most two decimals.
        mutating func appendInterpolation(_ value: Double) {
            let rounded = (value * 100).rounded() / 100
            markup += rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        }
    }
}
