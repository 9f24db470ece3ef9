import Testing
import Touchpoint

/// Every operator against every kind of property value, through both the reference matcher and
/// the compiled rule index.
struct MatcherTests {
    /// The property values each operator is tried against (nil: the event lacks the property).
    static let samples: [(String, JSONValue?)] = [
        ("missing", nil), ("null", .null),
        ("'spring_sale'", "spring_sale"), ("'Spring'", "Spring"), ("'60'", "60"), ("''", ""),
        // "café" precomposed and decomposed: equal as strings, compared by character.
        ("'café'", "caf\u{E9}"), ("'cafe+accent'", "cafe\u{301}"),
        // CR LF is one character: it contains neither CR nor LF alone.
        ("'crlf'", "line\r\nbreak"), ("'aab'", "aab"),
        ("60", 60), ("60.0", 60.0), ("50.5", 50.5), ("-1", -1),
        ("true", true), ("false", false),
        ("['vip','new']", ["vip", "new"]), ("[60]", [60]), ("{a:1}", ["a": 1]),
    ]

    /// A matcher and the samples it matches; every other sample must not match.
    static let table: [(PropertyMatcher, Set<String>)] = [
        (.equals("spring_sale"), ["'spring_sale'"]),
        (.equals("60"), ["'60'"]),
        (.equals("caf\u{E9}"), ["'café'", "'cafe+accent'"]),
        (.equals(60), ["60", "60.0"]),
        (.equals(60.0), ["60", "60.0"]),
        (.equals(true), ["true"]),
        (.equals(false), ["false"]),
        (PropertyMatcher(.ne, "spring_sale"), all.subtracting(["'spring_sale'"])),
        (PropertyMatcher(.ne, 60), all.subtracting(["60", "60.0"])),
        (PropertyMatcher(.ne, true), all.subtracting(["true"])),
        (PropertyMatcher(.gt, 50), ["60", "60.0", "50.5"]),
        (PropertyMatcher(.gt, 60), []),
        (PropertyMatcher(.gte, 60), ["60", "60.0"]),
        (PropertyMatcher(.gte, 50.5), ["60", "60.0", "50.5"]),
        (PropertyMatcher(.lt, 60), ["50.5", "-1"]),
        (PropertyMatcher(.lt, 0), ["-1"]),
        (PropertyMatcher(.lte, 60.0), ["60", "60.0", "50.5", "-1"]),
        (PropertyMatcher(.contains, "spring"), ["'spring_sale'"]),
        (PropertyMatcher(.contains, "Spring"), ["'Spring'"]),
        (PropertyMatcher(.contains, "vip"), ["['vip','new']"]),
        (
            PropertyMatcher(.contains, ""),
            ["'spring_sale'", "'Spring'", "'60'", "''", "'café'", "'cafe+accent'", "'crlf'", "'aab'"]
        ),
        (PropertyMatcher(.contains, "caf"), ["'café'", "'cafe+accent'"]),
        (PropertyMatcher(.contains, "sale"), ["'spring_sale'"]),
        (PropertyMatcher(.contains, "ab"), ["'aab'"]),
        (PropertyMatcher(.contains, "\r"), []),
        (PropertyMatcher(.contains, "\r\n"), ["'crlf'"]),
        (PropertyMatcher(.contains, "cafe"), []),
        (PropertyMatcher(.contains, "\u{E9}"), ["'café'", "'cafe+accent'"]),
        (PropertyMatcher(.contains, "60"), ["'60'"]),
        (PropertyMatcher(.notContains, "spring"), all.subtracting(["'spring_sale'"])),
        (PropertyMatcher(.notContains, "vip"), all.subtracting(["['vip','new']"])),
        (.exists, all.subtracting(["missing"])),
        (.notExists, ["missing"]),
    ]

    static var all: Set<String> { Set(samples.map(\.0)) }

    @Test(arguments: table.indices)
    func operatorAgainstEveryValueType(_ row: Int) {
        let (matcher, expected) = Self.table[row]
        let index = SurveyRuleIndex(rules: [Fixture.rule("r", on: "e", properties: ["p": matcher])])
        for (name, value) in Self.samples {
            let properties: [String: JSONValue] = value.map { ["p": $0] } ?? [:]
            let reference = matcher.matches(value)
            let compiled = !index.matchingRules(name: "e", properties: properties).isEmpty
            #expect(reference == expected.contains(name), "\(matcher.json.jsonString()) on \(name)")
            #expect(compiled == reference, "compiled index disagrees: \(matcher.json.jsonString()) on \(name)")
        }
    }

    @Test func everyOperatorIsInTheTable() {
        #expect(Set(Self.table.map(\.0.op)) == Set(PropertyMatcher.Operator.allCases))
    }

    @Test func conditionsAreCombinedWithAnd() {
        let trigger = EventTrigger(
            name: "checkout_success",
            properties: [
                "amount": PropertyMatcher(.gt, 50), "coupon": .exists, "utm": PropertyMatcher(.contains, "spring"),
            ])
        #expect(
            trigger.matches(name: "checkout_success", properties: ["amount": 51, "coupon": "X", "utm": "spring_sale"]))
        #expect(!trigger.matches(name: "checkout_success", properties: ["amount": 51, "coupon": "X", "utm": "fall"]))
        #expect(!trigger.matches(name: "checkout_success", properties: ["amount": 50, "coupon": "X", "utm": "spring"]))
        #expect(!trigger.matches(name: "Checkout_Success", properties: ["amount": 51, "coupon": "X", "utm": "spring"]))
        #expect(EventTrigger(name: "done").matches(name: "done", properties: ["anything": 1]))
        #expect(
            trigger.mismatch(in: ["amount": 40, "utm": "spring"]) == "amount 40 is not gt 50",
            "the first failing condition in key order")
        #expect(trigger.mismatch(in: ["amount": 60, "utm": "spring"]) == "coupon is missing (exists)")
        #expect(trigger.mismatch(in: ["amount": 60, "coupon": 1, "utm": "spring"]) == nil)
    }

    @Test func theIndexReturnsMatchesInConfigOrderAcrossNames() {
        let rules = [
            Fixture.rule("a", on: "x"), Fixture.rule("b", on: "y"),
            Fixture.rule("c", on: "x", properties: ["n": PropertyMatcher(.gt, 5)]),
            Fixture.rule("d", on: "x", properties: ["n": PropertyMatcher(.lt, 5), "m": .exists]),
            Fixture.rule("e", on: "x", properties: ["m": .notExists]),
        ]
        let index = SurveyRuleIndex(rules: rules)
        #expect(index.matchingRules(name: "x", properties: ["n": 9]) == [0, 2, 4])
        #expect(index.matchingRules(name: "x", properties: ["n": 1, "m": 0]) == [0, 3])
        #expect(index.matchingRules(name: "y", properties: [:]) == [1])
        #expect(index.matchingRules(name: "z", properties: ["n": 9]).isEmpty)
        #expect(index.hasRules(forEventNamed: "x") && !index.hasRules(forEventNamed: "z"))
    }
}
