extension JSONPath {
    /// Reads a path written the way ``description`` writes one.
    ///
    /// The grammar, from the root:
    /// - a key: `cart.total` (letters, digits, `_` and `$`, not starting with a digit);
    /// - an array index: `items[0].title`;
    /// - a wildcard, one step that matches any element or member: `items[*].price` or `prices.*`;
    /// - a quoted key, for keys that are not plain identifiers: `labels["pt-BR"]`, `["a.b"]`,
    ///   written as a JSON string (so `\"`, `\\` and `\u00e9` escapes work);
    /// - `$` alone is the root; a leading `$.` or `$[` is allowed and means nothing more.
    ///
    /// No whitespace is allowed anywhere. Every path's ``description`` parses back to an equal path.
    ///
    /// ```swift
    /// let path = try JSONPath(parsing: #"items[0]["display.name"]"#)
    /// path.components  // [.key("items"), .index(0), .key("display.name")]
    /// ```
    /// - Parameter text: the path as text.
    /// - Throws: ``JSONPathSyntaxError`` naming the character where the text went wrong.
    public init(parsing text: String) throws(JSONPathSyntaxError) {
        var parser = JSONPathParser(text)
        self.init(components: try parser.parse())
    }
}

/// The scanner behind ``JSONPath/init(parsing:)``: one pass over the text's Unicode scalars.
struct JSONPathParser {
    let text: String
    let scalars: [Unicode.Scalar]
    var position = 0
    /// The UTF-8 offset of `scalars[position]`.
    var byteOffset = 0

    init(_ text: String) {
        self.text = text
        self.scalars = Array(text.unicodeScalars)
    }

    var current: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    mutating func advance() {
        byteOffset += UTF8.width(scalars[position])
        position += 1
    }

    func error(_ code: JSONPathSyntaxError.Code, _ reason: String, at offset: Int? = nil) -> JSONPathSyntaxError {
        JSONPathSyntaxError(text: text, offset: offset ?? byteOffset, code: code, reason: reason)
    }

    mutating func parse() throws(JSONPathSyntaxError) -> [JSONPath.Component] {
        guard !scalars.isEmpty else { throw error(.empty, "a key path cannot be empty; use $ for the root") }
        var components: [JSONPath.Component] = []
        if current == "$", position + 1 == scalars.count || scalars[position + 1] == "." || scalars[position + 1] == "["
        {
            advance()
            if current == nil { return [] }
            if current == "." {
                advance()
                components.append(try parseDotted())
            }
        } else if current != "[" {
            components.append(try parseDotted())
        }
        while let scalar = current {
            switch scalar {
            case ".":
                advance()
                components.append(try parseDotted())
            case "[":
                components.append(try parseBracket())
            default:
                throw error(.unexpectedCharacter, "expected '.' or '[' before \(Self.quote(scalar))")
            }
        }
        return components
    }

    /// A key or `*` after a dot (or at the start).
    mutating func parseDotted() throws(JSONPathSyntaxError) -> JSONPath.Component {
        guard let first = current else { throw error(.unexpectedEnd, "expected a key after '.'") }
        if first == "*" {
            advance()
            return .wildcard
        }
        if ("0"..."9").contains(first) {
            throw error(
                .unexpectedCharacter, "a key cannot start with a digit; write an array index as [\(first)]")
        }
        guard JSONPath.isIdentifierStart(first) else {
            throw error(
                .unexpectedCharacter,
                "expected a key, found \(Self.quote(first)); quote keys like this: [\"…\"]")
        }
        var key = String.UnicodeScalarView()
        while let scalar = current, JSONPath.isIdentifierContinue(scalar) {
            key.append(scalar)
            advance()
        }
        if let scalar = current, scalar != ".", scalar != "[" {
            throw error(
                .unexpectedCharacter,
                "\(Self.quote(scalar)) cannot appear in a plain key; quote keys like this: [\"…\"]")
        }
        return .key(String(key))
    }

    /// `[12]`, `[*]` or `["key"]`.
    mutating func parseBracket() throws(JSONPathSyntaxError) -> JSONPath.Component {
        let open = byteOffset
        advance()  // "["
        let component: JSONPath.Component
        switch current {
        case nil:
            throw error(.unexpectedEnd, "expected an index, * or a quoted key after '['")
        case "*":
            advance()
            component = .wildcard
        case "\"":
            component = .key(try parseQuotedKey())
        case let scalar? where ("0"..."9").contains(scalar):
            component = .index(try parseIndex())
        case "-":
            throw error(.invalidIndex, "an array index cannot be negative")
        case "'":
            throw error(.unexpectedCharacter, "quote keys with double quotes: [\"…\"]")
        case let scalar?:
            throw error(.unexpectedCharacter, "expected an index, * or a quoted key, found \(Self.quote(scalar))")
        }
        guard current == "]" else {
            if current == nil { throw error(.unexpectedEnd, "'[' at byte \(open) is never closed; expected ']'") }
            throw error(.unexpectedCharacter, "expected ']', found \(Self.quote(current!))")
        }
        advance()
        return component
    }

    mutating func parseIndex() throws(JSONPathSyntaxError) -> Int {
        let start = byteOffset
        if current == "0", position + 1 < scalars.count, ("0"..."9").contains(scalars[position + 1]) {
            throw error(.invalidIndex, "an array index cannot have leading zeros")
        }
        var value = 0
        while let scalar = current, ("0"..."9").contains(scalar) {
            let digit = Int(scalar.value - 48)
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(digit)
            if overflow1 || overflow2 { throw error(.invalidIndex, "the array index is too large", at: start) }
            value = sum
            advance()
        }
        return value
    }

    /// A JSON string literal, decoded by the foundation's JSON parser so escapes mean what they mean in JSON.
    mutating func parseQuotedKey() throws(JSONPathSyntaxError) -> String {
        let start = byteOffset
        var literal = String.UnicodeScalarView()
        literal.append("\"")
        advance()
        var closed = false
        while let scalar = current {
            literal.append(scalar)
            advance()
            if scalar == "\\" {
                guard let escaped = current else { break }
                literal.append(escaped)
                advance()
            } else if scalar == "\"" {
                closed = true
                break
            }
        }
        guard closed else {
            throw error(.unterminatedString, "the quoted key is never closed; expected '\"'", at: start)
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(String(literal))
        } catch {
            throw self.error(.invalidString, "invalid quoted key: \(error.reason)", at: start + error.offset)
        }
        guard case .string(let key) = value else { throw self.error(.invalidString, "not a string", at: start) }
        return key
    }

    static func quote(_ scalar: Unicode.Scalar) -> String {
        scalar.properties.isWhitespace || scalar.value < 0x20 ? "'\(scalar.escaped(asASCII: true))'" : "'\(scalar)'"
    }
}
