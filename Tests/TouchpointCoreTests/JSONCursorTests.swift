import Testing
import TouchpointCore

/// The cursor accepts exactly what the parser accepts, with the same errors, without building values.
struct JSONCursorTests {
    /// What the cursor makes of `bytes` as one document: nil when it reads the value and reaches
    /// the end, the error otherwise (trailing data worded as the parser words it).
    static func cursorError(_ bytes: [UInt8]) -> JSONParseError? {
        bytes.withUnsafeBufferPointer { buffer -> JSONParseError? in
            var cursor = JSONCursor(buffer)
            do throws(JSONParseError) {
                cursor.skipWhitespace()
                try cursor.skipValue(depth: 0)
                cursor.skipWhitespace()
                guard cursor.isAtEnd else {
                    return JSONParseError(offset: cursor.offset, reason: "unexpected data after the JSON value")
                }
                return nil
            } catch {
                return error
            }
        }
    }

    static func parserError(_ bytes: [UInt8]) -> JSONParseError? {
        do {
            _ = try JSONParser.parse(bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        "", "{", #"{"a" 1}"#, #"{"a":1,}"#, "[1 2]", "01", "1.", "-", "tru", "nul1", #""abc"#, "\"a\u{1}b\"",
        #""\x""#, #""\uD800""#, #""\uDC00""#, "1 2", "@", "1e999", "-0.5e-3", #"{"k":[true,false,null,"\u00e9"]}"#,
        " [ {} , [ ] ] ", #"{"a":{"b":{"c":[1,{"d":"e"}]}}}"#,
    ])
    func agreesWithTheParser(text: String) {
        let bytes = Array(text.utf8)
        #expect(Self.cursorError(bytes) == Self.parserError(bytes))
    }

    @Test func agreesWithTheParserOnRandomBytesAndNesting() {
        var generator = UUIDv7Generator(seed: 23)
        let alphabet = Array(#"{}[]",:\ 0123456789.eE+-tfnulrasu"#.utf8)
        var accepted = 0
        for length in 0..<4_000 {
            var bytes: [UInt8] = []
            for _ in 0..<(length % 48) {
                let random = generator.nextRandom()
                bytes.append(
                    random & 3 != 0
                        ? alphabet[Int(random >> 8) % alphabet.count] : UInt8(truncatingIfNeeded: random >> 24))
            }
            let expected = Self.parserError(bytes)
            #expect(Self.cursorError(bytes) == expected, "\(bytes)")
            if expected == nil { accepted += 1 }
        }
        #expect(accepted > 20, "\(accepted) accepted")
        // Valid documents, and the same with one byte changed, dropped or cut short.
        let documents = [
            #"{"a":[1,-2.5e3,true,false,null],"b":{"c":"\u00e9\n","d":[]},"e":"plain"}"#,
            #"[{"k":0},{"k":"v","w":[[[]]]},-0,1E+2,"\ud83d\ude00"]"#,
        ].map { Array($0.utf8) }
        let alphabet2 = Array(#"{}[]",:\ 0.eE-tfnu"#.utf8) + [0x00, 0x1F, 0xC3, 0xED, 0xFF]
        var mutatedAccepted = 0
        for round in 0..<3_000 {
            var bytes = documents[round % documents.count]
            if round > 0 {
                let random = generator.nextRandom()
                let position = Int(random % UInt64(bytes.count))
                switch (random >> 16) % 3 {
                case 0: bytes[position] = alphabet2[Int(random >> 24) % alphabet2.count]
                case 1: bytes.remove(at: position)
                default: bytes.removeLast(bytes.count - position)
                }
            }
            let expected = Self.parserError(bytes)
            #expect(Self.cursorError(bytes) == expected, "\(String(decoding: bytes, as: UTF8.self))")
            if expected == nil { mutatedAccepted += 1 }
        }
        #expect(mutatedAccepted > 100, "\(mutatedAccepted) accepted")
        for depth in [JSONParser.maximumDepth, JSONParser.maximumDepth + 1] {
            let deep = Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
            #expect(Self.cursorError(deep) == Self.parserError(deep))
        }
    }

    /// Strings long enough for the cursor's eight-bytes-at-a-time scan, with every byte value (and
    /// some well-formed multi-byte characters) at every position of a word.
    @Test func agreesWithTheParserOnEveryByteAtEveryPositionOfALongString() {
        var compared = 0
        let specials: [[UInt8]] =
            (0...255).map { [UInt8($0)] }
            + ["é", "€", "😀", "\\n", "\\u00e9", "\\\"", "\\x"].map { Array($0.utf8) }
        for special in specials {
            for before in 0..<17 {
                let text =
                    [UInt8(ascii: "\"")] + Array(repeating: UInt8(ascii: "a"), count: before) + special
                    + Array(repeating: UInt8(ascii: "b"), count: 9) + [UInt8(ascii: "\"")]
                let document = Array("[".utf8) + text + Array(", 1]".utf8)
                #expect(Self.cursorError(document) == Self.parserError(document), "\(special) after \(before)")
                compared += 1
            }
        }
        #expect(compared == 263 * 17)
    }

    @Test func readsKeysAndValuesItIsAskedFor() throws {
        let bytes = Array(#"{"plain": {"x": [1, 2]}, "esc\u0061ped": 5, "want": "yes"}"#.utf8)
        try bytes.withUnsafeBufferPointer { buffer in
            var cursor = JSONCursor(buffer)
            let opened = cursor.take(UInt8(ascii: "{"))
            #expect(opened)
            var keys: [String?] = []
            var wanted: JSONValue?
            repeat {
                let key = try cursor.readKey()
                keys.append(key.map { String(decoding: $0, as: UTF8.self) })
                if let key, JSONCursor.key(key, is: "want") {
                    wanted = try cursor.readValue(depth: 1)
                } else {
                    let range = try cursor.skipValue(depth: 1)
                    #expect(!range.isEmpty)
                }
            } while try cursor.endOfMember(close: UInt8(ascii: "}"))
            let atEnd = cursor.isAtEnd
            #expect(atEnd)
            #expect(keys == ["plain", nil, "want"])
            #expect(wanted == .string("yes"))
        }
    }
}
