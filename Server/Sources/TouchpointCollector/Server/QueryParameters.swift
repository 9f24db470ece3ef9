import Foundation
import Hummingbird

/// A request's query string (or an `application/x-www-form-urlencoded` body), decoded as browsers,
/// HTML forms, Python's `urlencode` and most HTTP libraries encode it: `+` is a space and `%XX` a
/// byte of UTF-8, so `?event=Order+Completed` and `?event=Order%20Completed` both name
/// `Order Completed` (a literal plus is sent as `%2B`).
///
/// Every route reads its parameters through this type (``Request/parameters()``), never through
/// Hummingbird's `uri.queryParameters`, which leaves a `+` as it is. A parameter named twice keeps
/// its first value. A value whose percent encoding is not valid (an escape that is not two hex
/// digits, or bytes that are not UTF-8) is taken with its `+` as spaces and its escapes as sent.
/// Clients that leave a literal `+` unescaped (Swift's `URLQueryItem`, a hand-typed URL) are met
/// where a `+` is certain: a time's offset (``timeText(_:)``) and the cursors the API hands out,
/// which never hold one (``OpaqueID``).
public struct QueryParameters: Sendable {
    /// The parameters in the order they were sent, decoded.
    public let pairs: [(name: String, value: String)]

    /// Decodes `query` (the text after `?`, without it).
    /// - Throws: ``CollectorError`` `invalid_parameter` naming a parameter whose name or value
    ///   holds a NUL character: no store keeps one in text, so such a value could never be answered.
    public init(_ query: String?) throws(CollectorError) {
        let pairs = Self.decodedPairs(query ?? "")
        for (name, value) in pairs {
            guard !name.utf8.contains(0) else {
                throw CollectorError(
                    .invalidParameter, "a query parameter's name holds a NUL character (%00)", path: "query")
            }
            guard !value.utf8.contains(0) else {
                throw CollectorError(
                    .invalidParameter, "\(name): holds a NUL character (%00), which no store keeps in text",
                    path: name)
            }
        }
        self.pairs = pairs
    }

    /// The names and values of `query`, decoded (``decode(_:)``), in the order they were sent.
    private static func decodedPairs(_ query: String) -> [(name: String, value: String)] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { piece in
            let parts = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// The first value of `name`, or nil when the query does not name it.
    public func get(_ name: String) -> String? {
        pairs.first { $0.name == name }?.value
    }

    /// The values of a stored query (a saved insight's), each name with its first value, a NUL
    /// read as U+FFFD: such a value was stored before NUL was refused, and must not make the list
    /// it is in unreadable.
    static func stored(_ query: String) -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in decodedPairs(query) {
            let readable = name.replacingOccurrences(of: "\0", with: "\u{FFFD}")
            if result[readable] == nil { result[readable] = value.replacingOccurrences(of: "\0", with: "\u{FFFD}") }
        }
        return result
    }

    /// The names of the parameters, each once, in the order they were first sent.
    public var names: [String] {
        var seen = Set<String>()
        return pairs.compactMap { seen.insert($0.name).inserted ? $0.name : nil }
    }

    /// The parameters as a dictionary, each name with its first value.
    public var dictionary: [String: String] {
        var result: [String: String] = [:]
        for (name, value) in pairs where result[name] == nil { result[name] = value }
        return result
    }

    /// `text` as one name or value of a query: every byte but letters, digits and `-._~`
    /// percent-encoded (so a space is `%20` and a plus `%2B`), which ``init(_:)`` decodes back.
    static func encoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// `text` of a time parameter with its offset's `+` back: a time holds no space, so
    /// `2026-11-22T09:41:07 02:00` was sent as `…07+02:00` by a client that left the `+` unescaped.
    static func timeText(_ text: String) -> String {
        guard text.contains("T"), let space = text.lastIndex(of: " ") else { return text }
        let offset = text[text.index(after: space)...]
        guard [2, 4, 5].contains(offset.count), offset.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ":") }) else {
            return text
        }
        return text[..<space] + "+" + offset
    }

    /// One name or value of a query: `+` as a space, then percent-decoded (as it is when the
    /// decoding fails: an invalid escape or bytes that are not UTF-8).
    static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}

extension Request {
    /// The request's query parameters, decoded as clients encode them (``QueryParameters``).
    /// - Throws: ``CollectorError`` `invalid_parameter` for a parameter holding a NUL character.
    public func parameters() throws(CollectorError) -> QueryParameters {
        try QueryParameters(uri.query)
    }
}
