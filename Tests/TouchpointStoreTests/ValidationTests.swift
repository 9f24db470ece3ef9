import Testing
import TouchpointStore

struct ValidationTests {
    private func store(_ mode: ValidationOptions.Mode, _ schema: [String: ValidationRule]) -> any KeyValueStore {
        let store = DefaultStore(appID: "validation").named(.appMemory)
        store.configureValidation(ValidationOptions(mode: mode, schema: schema))
        return store
    }

    @Test(arguments: [
        (ValidationRule.Kind.string, StoreValue.string("a"), true),
        (.string, .integer(1), false),
        (.number, .number(1.5), true),
        (.number, .integer(2), true),
        (.number, .string("2"), false),
        (.integer, .integer(2), true),
        (.integer, .number(2), false),
        (.bool, .bool(false), true),
        (.bool, .integer(0), false),
        (.color, .color("#1E90FF"), true),
        (.color, .color("#1E90FF80"), true),
        (.color, .color("#FFF"), true),
        (.color, .color("blue"), false),
        (.color, .string("#FFFFFF"), false),
        (.url, .url("https://acme.example/x"), true),
        (.url, .url("not a url"), false),
        (.url, .url("relative/path"), false),
        (.array, .array([]), true),
        (.object, .object([:]), true),
        (.object, .array([]), false),
        (.string, .null, true),
    ])
    func strictKindCheck(kind: ValidationRule.Kind, value: StoreValue, accepted: Bool) {
        let store = store(.strict, ["v": Rule(kind: kind)])
        #expect(store.validateWrite("v", value).isOK == accepted)
        #expect(store.set("v", value).isOK == accepted)
        #expect(store.get("v") == (accepted ? value : Optional<StoreValue>.none))
    }

    @Test func minAndMaxMeasureValuesLengthsAndSizes() {
        let store = store(
            .strict,
            [
                "age": Rule(kind: .integer, min: 0, max: 130),
                "ratio": Rule(kind: .number, min: 0, max: 1),
                "name": Rule(kind: .string, min: 1, max: 5),
                "tags": Rule(kind: .array, max: 2),
                "meta": Rule(kind: .object, min: 1),
            ])
        #expect(store.set("age", 130) == .ok)
        #expect(store.set("age", 131) == .failed(reason: "age: value 131 is above the maximum 130"))
        #expect(store.set("age", -1) == .failed(reason: "age: value -1 is below the minimum 0"))
        #expect(store.set("ratio", 0.5) == .ok)
        #expect(store.set("ratio", 1.5) != .ok)
        #expect(store.set("name", "Ada") == .ok)
        #expect(store.set("name", "") == .failed(reason: "name: length 0 characters is below the minimum 1"))
        #expect(store.set("name", "Émilie") == .failed(reason: "name: length 6 characters is above the maximum 5"))
        #expect(store.set("tags", ["a", "b"]) == .ok)
        #expect(store.set("tags[2]", "c") == .failed(reason: "tags: length 3 elements is above the maximum 2"))
        #expect(store.set("meta", [:]) == .failed(reason: "meta: size 0 members is below the minimum 1"))
        #expect(store.get("tags") == ["a", "b"])
    }

    @Test func patternsMustMatchTheWholeText() {
        let store = store(
            .strict, ["code": Rule(kind: .string, pattern: "[A-Z]{3}[0-9]+"), "bad": Rule(kind: .string, pattern: "(")])
        #expect(store.set("code", "ABC123") == .ok)
        #expect(
            store.set("code", "xABC123")
                == .failed(reason: #"code: "xABC123" does not match the pattern [A-Z]{3}[0-9]+"#))
        #expect(store.set("code", "ABC123x") != .ok)
        #expect(
            store.set("bad", "anything")
                == .failed(reason: #"bad: the rule's pattern "(" is not a valid regular expression"#))
    }

    @Test func requiredValuesCannotBeRemovedOrNulledInStrictMode() {
        let store = store(.strict, ["cart.total": Rule(kind: .number, required: true, defaultValue: 0)])
        #expect(store.get("cart.total") == 0)  // filled when configured
        #expect(store.remove("cart.total") == .failed(reason: "cart.total: is required"))
        #expect(store.set("cart.total", .null) == .failed(reason: "cart.total: is required (found null)"))
        #expect(store.set("cart", [:]) == .failed(reason: "cart.total: is required"))
        #expect(store.remove("cart") != .ok)
        #expect(store.set("cart", ["total": 5, "extra": true]) == .ok)
    }

    @Test func writingAParentChecksTheRulesBelowIt() {
        let store = store(
            .strict, ["items[*].price": Rule(kind: .number, required: true), "user.name": Rule(kind: .string)])
        #expect(store.set("items", [["price": 1], ["price": 2.5]]) == .ok)
        #expect(
            store.set("items", [["price": 1], ["title": "no price"]]) == .failed(reason: "items[1].price: is required"))
        #expect(
            store.set("items[2]", ["price": "3"])
                == .failed(reason: #"items[2].price: expected number, found string "3""#))
        #expect(store.set("user", ["name": 5]) != .ok)
        // An unrelated invalid element elsewhere does not block other writes.
        #expect(store.set("other", 1) == .ok)
    }

    @Test(arguments: [
        (ValidationRule.Kind.integer, StoreValue.string("1"), StoreValue.integer(1)),
        (.integer, .string(" 42 "), .integer(42)),
        (.integer, .number(3), .integer(3)),
        (.integer, .string("3.0"), .integer(3)),
        (.number, .string("1.5"), .number(1.5)),
        (.number, .integer(2), .integer(2)),
        (.bool, .string("true"), .bool(true)),
        (.bool, .string("No"), .bool(false)),
        (.bool, .integer(1), .bool(true)),
        (.string, .integer(12), .string("12")),
        (.string, .number(2.5), .string("2.5")),
        (.string, .bool(true), .string("true")),
        (.string, .url("https://a.example"), .string("https://a.example")),
        (.color, .string("#ABCDEF"), .color("#ABCDEF")),
        (.url, .string("https://acme.example"), .url("https://acme.example")),
    ])
    func lenientCoerces(kind: ValidationRule.Kind, written: StoreValue, stored: StoreValue) {
        let store = store(.lenient, ["v": Rule(kind: kind)])
        #expect(store.set("v", written) == .ok)
        #expect(store.get("v") == stored)
    }

    @Test func lenientClampsFallsBackToTheDefaultOrRejects() {
        let store = store(
            .lenient,
            [
                "volume": Rule(kind: .integer, min: 0, max: 10),
                "level": Rule(kind: .number, max: 1.5),
                "nick": Rule(kind: .string, defaultValue: "anon", max: 4),
                "count": Rule(kind: .integer),
            ])
        store.set("volume", 50)
        #expect(store.get("volume") == 10)
        store.set("volume", "-3")
        #expect(store.get("volume") == 0)
        store.set("level", 9)
        #expect(store.get("level") == 1.5)
        store.set("nick", "toolong")
        #expect(store.get("nick") == "anon")
        store.set("nick", ["not", "text"])
        #expect(store.get("nick") == "anon")
        #expect(store.set("count", 2.5) == .failed(reason: "count: expected integer, found number 2.5"))
        #expect(store.set("count", "lots") != .ok)
        #expect(store.get("count") == nil)
    }

    @Test func lenientRestoresARequiredDefault() {
        let store = store(.lenient, ["cart.total": Rule(kind: .number, required: true, defaultValue: 0)])
        store.set("cart.total", 9)
        #expect(store.remove("cart.total") == .ok)
        #expect(store.get("cart.total") == 0)
        store.set("cart", ["items": []])
        #expect(store.get("cart") == ["items": [], "total": 0])
    }

    @Test func configuringLenientValidationFixesExistingValues() {
        let store = DefaultStore(appID: "validation").named(.appMemory)
        store.set("count", "12")
        store.set("flag", "yes")
        store.configureValidation(
            .init(mode: .lenient, schema: ["count": Rule(kind: .integer), "flag": Rule(kind: .bool)]))
        #expect(store.snapshot() == ["count": 12, "flag": true])
    }

    @Test func validateWriteChangesNothing() {
        let store = store(.strict, ["n": Rule(kind: .integer, max: 3)])
        #expect(store.validateWrite("n", 2) == .ok)
        #expect(store.validateWrite("n", 4) == .failed(reason: "n: value 4 is above the maximum 3"))
        // Writing n.x would create an object at n, which its rule forbids.
        #expect(store.validateWrite("n.x", 1) == .failed(reason: #"n: expected integer, found object {"x":1}"#))
        #expect(store.snapshot().isEmpty)
    }
}
