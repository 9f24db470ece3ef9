import Testing
import TouchpointCore

struct JSONPathParsingTests {
    @Test(arguments: [
        ("cart.total", [JSONPath.Component.key("cart"), .key("total")]),
        ("items[0].title", [.key("items"), .index(0), .key("title")]),
        ("items[*].price", [.key("items"), .wildcard, .key("price")]),
        ("prices.*", [.key("prices"), .wildcard]),
        ("*.name", [.wildcard, .key("name")]),
        (#"["a.b"]"#, [.key("a.b")]),
        (#"labels["pt-BR"]"#, [.key("labels"), .key("pt-BR")]),
        (#"x["quote\"d"]["back\\slash"]"#, [.key("x"), .key("quote\"d"), .key("back\\slash")]),
        (#"["\u00e9t\u00e9"]"#, [.key("été")]),
        (#"[""]"#, [.key("")]),
        ("matrix[10][2]", [.key("matrix"), .index(10), .index(2)]),
        ("[3]", [.index(3)]),
        ("$", []),
        ("$.a", [.key("a")]),
        ("$[1]", [.index(1)]),
        ("$a", [.key("$a")]),
        ("_private$1", [.key("_private$1")]),
        ("ünïcode.naïve", [.key("ünïcode"), .key("naïve")]),
    ])
    func parses(text: String, components: [JSONPath.Component]) throws {
        #expect(try JSONPath(parsing: text) == JSONPath(components: components))
    }

    @Test(arguments: [
        JSONPath.root,
        JSONPath(components: [.key("a"), .key("b")]),
        JSONPath(components: [.key("a.b"), .index(0), .wildcard, .key("[x]")]),
        JSONPath(components: [.key("$"), .key("*"), .key(""), .key("0"), .key("1a")]),
        JSONPath(components: [.index(0), .key("with space"), .key("tab\there"), .key("\u{1}")]),
        JSONPath(components: [.key("emoji😀"), .key("quote\"s"), .key("\\")]),
        JSONPath(components: [.wildcard, .wildcard, .index(Int.max)]),
    ])
    func descriptionParsesBack(path: JSONPath) throws {
        #expect(try JSONPath(parsing: path.description) == path)
    }

    @Test func randomPathsRoundTrip() throws {
        var generator = SplitMix64(seed: 0x5EED)
        let alphabet: [Character] = ["a", "Z", "_", "$", "0", "9", ".", "[", "]", "*", "\"", "\\", " ", "é", "-", "\n"]
        for _ in 0..<2_000 {
            var components: [JSONPath.Component] = []
            for _ in 0..<Int(generator.next() % 5) {
                switch generator.next() % 3 {
                case 0: components.append(.index(Int(generator.next() % 1_000)))
                case 1: components.append(.wildcard)
                default:
                    let length = Int(generator.next() % 6)
                    let key = String((0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
                    components.append(.key(key))
                }
            }
            let path = JSONPath(components: components)
            #expect(try JSONPath(parsing: path.description) == path, "\(path)")
        }
    }

    @Test(arguments: [
        ("", JSONPathSyntaxError.Code.empty, 0),
        ("items[0.title", .unexpectedCharacter, 7),
        ("items[0", .unexpectedEnd, 7),
        ("items[", .unexpectedEnd, 6),
        ("a..b", .unexpectedCharacter, 2),
        ("a.", .unexpectedEnd, 2),
        ("a.0", .unexpectedCharacter, 2),
        ("a b", .unexpectedCharacter, 1),
        ("tagline.pt-BR", .unexpectedCharacter, 10),
        ("items[-1]", .invalidIndex, 6),
        ("items[01]", .invalidIndex, 6),
        ("items[99999999999999999999]", .invalidIndex, 6),
        ("items['a']", .unexpectedCharacter, 6),
        (#"a["b"#, .unterminatedString, 2),
        (#"a["b\q"]"#, .invalidString, 4),
        ("a]", .unexpectedCharacter, 1),
        ("é.ü b", .unexpectedCharacter, 3),
        (".a", .unexpectedCharacter, 0),
    ])
    func rejects(text: String, code: JSONPathSyntaxError.Code, column: Int) {
        #expect {
            try JSONPath(parsing: text)
        } throws: { error in
            guard let error = error as? JSONPathSyntaxError else { return false }
            return error.code == code && error.column == column
        }
    }

    @Test func errorDescriptionPointsAtTheCharacter() {
        do {
            _ = try JSONPath(parsing: "items[0.title")
            Issue.record("expected a syntax error")
        } catch {
            #expect(
                error.description
                    == "invalid key path at character 8: expected ']', found '.'\n  items[0.title\n         ^")
            #expect(error.offset == 7)
        }
    }

    @Test func caretCountsCharactersNotBytes() {
        do {
            _ = try JSONPath(parsing: "prénom.x y")
            Issue.record("expected a syntax error")
        } catch {
            #expect(error.offset == 9)
            #expect(error.column == 8)
            #expect(error.caretLine == "        ^")
        }
    }
}

/// A small seeded generator, so random cases are the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
