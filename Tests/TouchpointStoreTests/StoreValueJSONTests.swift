import Foundation
import PropertyBased
import Testing
import TouchpointCore
import TouchpointStore

struct StoreValueJSONTests {
    static let samples: [StoreValue] = [
        .integer(1), .number(1), .number(1.5), .number(-0.25), .number(1e300), .number(.leastNonzeroMagnitude),
        .integer(Int.min), .integer(Int.max), .number(.infinity), .number(-.infinity),
        .string(""), .string("with \"quotes\" and \\ and \n and ü😀"), .bool(true), .bool(false), .null,
        .color("#FF0000"), .url("https://acme.example/a?b=c"), .array([]), .object([:]),
        .array([.integer(1), .number(1), .color("#000"), .null]),
        .object(["$color": .string("#FFF")]), .object(["$url": .integer(3)]), .object(["$object": .object([:])]),
        .object(["$number": .string("inf")]), .object(["$color": .string("#FFF"), "other": .bool(true)]),
        .object(["nested": .object(["$url": .string("x")]), "list": .array([.object(["$object": .null])])]),
    ]

    @Test(arguments: samples)
    func roundTripsThroughJSONText(value: StoreValue) throws {
        let text = value.jsonString()
        #expect(try StoreValue(jsonText: text) == value, "\(text)")
        #expect(StoreValue(json: value.jsonValue) == value)
    }

    @Test(arguments: samples)
    func roundTripsThroughCodable(value: StoreValue) throws {
        let data = try JSONEncoder().encode(value)
        #expect(
            try JSONDecoder().decode(StoreValue.self, from: data) == value, "\(String(decoding: data, as: UTF8.self))")
    }

    @Test func taggedEncodingIsDocumentedShape() {
        #expect(StoreValue.number(1).jsonString() == "1.0")
        #expect(StoreValue.integer(1).jsonString() == "1")
        #expect(StoreValue.color("#FF0000").jsonString() == ##"{"$color":"#FF0000"}"##)
        #expect(StoreValue.url("https://a.example").jsonString() == #"{"$url":"https://a.example"}"#)
        #expect(StoreValue.number(-.infinity).jsonString() == #"{"$number":"-inf"}"#)
        #expect(StoreValue.object(["$url": "x"]).jsonString() == #"{"$object":{"$url":"x"}}"#)
        #expect(StoreValue.object(["$url": "x", "a": 1]).jsonString(sortedKeys: true) == #"{"$url":"x","a":1}"#)
    }

    @Test func plainJSONIsReadAsItself() throws {
        let value = try StoreValue(jsonText: #"{"a":[1,2.5,"x",true,null],"b":{"c":{}}}"#)
        #expect(value == ["a": [1, 2.5, "x", true, .null], "b": ["c": [:]]])
    }

    @Test func nanRoundTripsAsNaN() throws {
        let value = try StoreValue(jsonText: StoreValue.number(.nan).jsonString())
        guard case .number(let number) = value else {
            Issue.record("expected a number, got \(value)")
            return
        }
        #expect(number.isNaN)
    }

    @Test func randomValuesRoundTrip() async {
        await propertyCheck(count: 300, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var generator = Xoshiro(seed: (seed, 0x5EED, 1, 2))
            let value = RandomValues.value(depth: 3, using: &generator)
            #expect((try? StoreValue(jsonText: value.jsonString())) == value)
            #expect((try? JSONDecoder().decode(StoreValue.self, from: JSONEncoder().encode(value))) == value)
        }
    }

    @Test func decodesIntoAppTypes() throws {
        struct Item: Decodable, Equatable {
            let title: String
            let price: Double
            let link: URL
        }
        let store = DefaultStore(appID: "decode").named(.appMemory)
        store.set("items[0]", ["title": "Socks", "price": 4, "link": .url("https://acme.example/socks")])
        #expect(
            try store.get("items[0]", as: Item.self)
                == Item(title: "Socks", price: 4, link: URL(string: "https://acme.example/socks")!))
        #expect(try store.get("items[0].price", as: Int.self) == 4)
        #expect(throws: StoreError.self) { try store.get("items[1]", as: Item.self) }
        do {
            _ = try store.get("items[0].title", as: Int.self)
            Issue.record("expected a type mismatch")
        } catch let error as StoreError {
            #expect(error.code == .typeMismatch)
            #expect(error.keyPath == "items[0].title")
        }
        do {
            _ = try store.get("items[9]", as: Int.self)
            Issue.record("expected not found")
        } catch let error as StoreError {
            #expect(error.code == .notFound)
        }
    }
}

/// Random store values from a seed.
enum RandomValues {
    static let keys = ["a", "b", "price", "$color", "$url", "$object", "$number", "x.y", ""]

    static func value(depth: Int, using generator: inout Xoshiro) -> StoreValue {
        let choice = Int(generator.next() % (depth > 0 ? 10 : 8))
        switch choice {
        case 0: return .string(text(using: &generator))
        case 1: return .number(Double(Int64(bitPattern: generator.next()) % 100_000) / 8)
        case 2: return .integer(Int(Int64(bitPattern: generator.next()) % 1_000_000))
        case 3: return .bool(generator.next() % 2 == 0)
        case 4: return .color("#" + String(generator.next() % 0xFFFFFF, radix: 16))
        case 5: return .url("https://example.com/" + text(using: &generator))
        case 6: return .null
        case 7: return .number(Double(generator.next() % 50))
        case 8:
            return .array((0..<Int(generator.next() % 4)).map { _ in value(depth: depth - 1, using: &generator) })
        default:
            var members: [String: StoreValue] = [:]
            for _ in 0..<Int(generator.next() % 4) {
                members[keys[Int(generator.next() % UInt64(keys.count))]] = value(depth: depth - 1, using: &generator)
            }
            return .object(members)
        }
    }

    static func text(using generator: inout Xoshiro) -> String {
        let alphabet = Array("ab \"\\é😀\n$")
        return String(
            (0..<Int(generator.next() % 6)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
    }
}
