import Foundation
import Testing
import TouchpointCore

struct JSONParserTests {
    @Test(arguments: [
        ("", 0, "unexpected end of input, expected a value"),
        ("{", 1, "unexpected end of input in an object"),
        (#"{"a" 1}"#, 5, "expected ':' after a key"),
        (#"{"a":1,}"#, 7, "expected a string key"),
        ("[1 2]", 3, "expected ',' or ']'"),
        ("01", 1, "a number may not have a leading zero"),
        ("1.", 2, "expected a digit after '.'"),
        ("-", 1, "expected a digit"),
        ("tru", 0, "unexpected end of input, expected 'true'"),
        ("nul1", 0, "invalid literal, expected 'null'"),
        (#""abc"#, 0, "unterminated string"),
        ("\"a\u{1}b\"", 2, "control character 0x1 in a string; escape it"),
        (#""\x""#, 1, #"invalid escape \'x'"#),
        (#""\uD800""#, 1, "lone high surrogate in \\u escape"),
        (#""\uDC00""#, 1, "lone low surrogate in \\u escape"),
        ("1 2", 2, "unexpected data after the JSON value"),
        ("@", 0, "unexpected character '@', expected a value"),
    ])
    func malformedTextIsRejectedWithItsOffset(text: String, offset: Int, reason: String) {
        #expect(throws: JSONParseError(offset: offset, reason: reason)) { try JSONParser.parse(text) }
    }

    @Test func invalidUTF8IsRejected() throws {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82],
        ] {
            #expect(throws: JSONParseError.self) { try JSONParser.parse(bytes) }
        }
        #expect(try JSONParser.parse([0x22, 0xE2, 0x82, 0xAC, 0x22]) == .string("€"))
    }

    @Test func nestingHasALimit() throws {
        let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(try JSONParser.parse(fine).arrayValue?.count == 1)
    }

    @Test func numbersKeepTheirKind() throws {
        #expect(try JSONParser.parse("42") == .int(42))
        #expect(try JSONParser.parse("-0") == .int(0))
        #expect(try JSONParser.parse("4.0") == .double(4))
        #expect(try JSONParser.parse("1e2") == .double(100))
        #expect(try JSONParser.parse("9223372036854775807") == .int(Int.max))
        #expect(try JSONParser.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try JSONParser.parse("1e999") == .double(.infinity))
        #expect(JSONValue.double(4).jsonString() == "4.0")
        #expect(JSONValue.double(.nan).jsonString() == "null")
    }

    @Test func escapesDecode() throws {
        #expect(
            try JSONParser.parse(#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00""#) == .string("a\"b\\c/d\u{8}\u{c}\n\r\té😀")
        )
    }

    @Test func writerEscapesWhatJSONRequires() throws {
        let text = "quote\" backslash\\ newline\n tab\t nul\u{0} bell\u{7} ü"
        let written = JSONValue.string(text).jsonString()
        #expect(written == #""quote\" backslash\\ newline\n tab\t nul\u0000 bell\u0007 ü""#)
        #expect(try JSONParser.parse(written) == .string(text))
    }

    @Test func randomBytesNeverCrashTheParser() {
        var generator = UUIDv7Generator(seed: 7)
        let alphabet = Array(#"{}[]",:\ 0123456789.eE+-tfnulrasu"#.utf8)
        for length in 0..<3_000 {
            var bytes: [UInt8] = []
            for _ in 0..<(length % 64) {
                let random = generator.nextRandom()
                bytes.append(
                    random & 1 == 0
                        ? alphabet[Int(random >> 8) % alphabet.count] : UInt8(truncatingIfNeeded: random >> 24))
            }
            _ = try? JSONParser.parse(bytes)
        }
    }

    @Test func randomValuesRoundTrip() throws {
        var generator = UUIDv7Generator(seed: 11)
        func value(depth: Int) -> JSONValue {
            let choice = generator.nextRandom() % (depth > 3 ? 5 : 7)
            switch choice {
            case 0: return .null
            case 1: return .bool(generator.nextRandom() & 1 == 0)
            case 2: return .int(Int(truncatingIfNeeded: generator.nextRandom()))
            case 3: return .double(Double(bitPattern: generator.nextRandom() & 0x7FEF_FFFF_FFFF_FFFF))
            case 4:
                let scalars = (0..<(generator.nextRandom() % 12)).compactMap { _ in
                    Unicode.Scalar(UInt32(generator.nextRandom() % 0x2FFFF))
                }
                return .string(String(String.UnicodeScalarView(scalars)))
            case 5: return .array((0..<(generator.nextRandom() % 5)).map { _ in value(depth: depth + 1) })
            default:
                var members: [String: JSONValue] = [:]
                for index in 0..<(generator.nextRandom() % 5) { members["k\(index)"] = value(depth: depth + 1) }
                return .object(members)
            }
        }
        for _ in 0..<500 {
            let original = value(depth: 0)
            #expect(try JSONParser.parse(original.jsonBytes()) == original)
        }
    }

    @Test func foundationCodableAgrees() throws {
        let value: JSONValue = ["a": [1, 2.5, "x", true, nil], "b": ["c": "d"]]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
        #expect(try JSONParser.parse(Array(data)) == value)
    }
}
