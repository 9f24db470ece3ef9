import Testing
import TouchpointCore

@testable import TouchpointCollector

/// Which values the rollup keeps as themselves (``ValueRollup/Value``): only those on which
/// Swift's string equality (canonical equivalence) and the databases' (bytes) agree, and only
/// keys that every database reads the same way.
struct ValueRollupValueTests {
    static func value(_ payload: String, _ property: String = "plan") -> ValueRollup.Value {
        ValueRollup.values(of: [property], payload: payload, lifted: 0)[0]
    }

    @Test func textInComposedFormIsKeptAndOtherSpellingsAreOther() {
        #expect(ValueRollup.Value(.string("pro")) == .text("pro"))
        // "é" composed (NFC) is kept; the same letter as e and a combining accent is not: Swift
        // would count the two as one value, a database's breakdown as two.
        #expect(ValueRollup.Value(.string("caf\u{E9}")) == .text("caf\u{E9}"))
        #expect(ValueRollup.Value(.string("cafe\u{301}")) == .other)
        // A combining mark first would join the tag's letter.
        #expect(ValueRollup.Value(.string("\u{301}x")) == .other)
        // The Kelvin sign's normal form is K.
        #expect(ValueRollup.Value(.string("\u{212A}")) == .other)
        #expect(ValueRollup.Value(.string("a\u{0}b")) == .other)
        #expect(
            ValueRollup.Value(.string(String(repeating: "x", count: 200))) == .text(String(repeating: "x", count: 200)))
        #expect(ValueRollup.Value(.string(String(repeating: "x", count: 201))) == .other)
        #expect(ValueRollup.Value(.null) == .absent)
        #expect(ValueRollup.Value(nil) == .absent)
        #expect(ValueRollup.Value(.bool(true)) == .other)
    }

    @Test func aValueSourceNamesItsValueBackByItsBytes() {
        for value in [ValueRollup.Value.text("caf\u{E9}"), .text("t"), .text(""), .absent, .other] {
            let name = ValueRollup.source(of: "web", property: "plan", value: value)
            #expect(ValueRollup.value(ofSource: name, source: "web", property: "plan") == value)
            #expect(ValueRollup.value(ofSource: name, source: "web", property: "plans") == nil)
        }
        #expect(ValueRollup.Value(tag: "t\u{301}") == .text("\u{301}"))
        #expect(ValueRollup.Value(tag: "ax") == nil)
    }

    @Test func aKeyOrAPropertiesMemberSentTwiceIsOther() {
        #expect(Self.value(#"{"properties":{"plan":"a"}}"#) == .text("a"))
        #expect(Self.value(#"{"properties":{"plan":"a","plan":"b"}}"#) == .other)
        #expect(Self.value(#"{"properties":{"plan":[],"plan":"b"}}"#) == .other)
        #expect(Self.value(#"{"properties":{"plan":"a"},"properties":{"plan":"a"}}"#) == .other)
        #expect(Self.value(#"{"properties":{"other":"a"}}"#) == .absent)
        // Keys are matched by their bytes, as a database's JSON path matches them.
        #expect(Self.value(#"{"properties":{"\#u{212A}ind":"a"}}"#, "Kind") == .absent)
        #expect(Self.value(#"{"properties":{"\u212Aind":"a"}}"#, "Kind") == .absent)
        #expect(Self.value(#"{"properties":{"Kind":"a"}}"#, "Kind") == .text("a"))
        // A stored payload that is the properties object itself.
        let lifted = StoredPayload.Lifted.properties.rawValue
        #expect(ValueRollup.values(of: ["plan"], payload: #"{"plan":"pro"}"#, lifted: lifted) == [.text("pro")])
    }
}
