import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointRouting
import TouchpointTesting

enum Mood: String, TrackableValueType {
    case happy
}

final class Opaque {}

@Suite(.timeLimit(.minutes(2)))
struct MetadataConversionTests {
    @Test func representableValuesBecomeJSON() {
        let date = Date(timeIntervalSince1970: 1_767_225_600.25)
        let none: Int? = nil
        let some: Int? = 5
        let conversion = MetadataConversion([
            "string": "text",
            "substring": "abc".dropFirst(),
            "character": Character("x"),
            "int": 42,
            "int8": Int8(-3),
            "uint64": UInt64(7),
            "double": 0.5,
            "float": Float(1.5),
            "bool": true,
            "date": date,
            "url": URL(string: "https://example.com/a?b=c")!,
            "null": NSNull(),
            "none": none as Any,
            "some": some as Any,
            "array": [1, "two", false] as [Any],
            "object": ["nested": ["deep": 1]] as [String: Any],
            "json": EventValue.array([.int(1)]),
            "enum": Mood.happy,
            "nsBool": NSNumber(value: true),
            "nsInt": NSNumber(value: 12),
            "nsDouble": NSNumber(value: 2.25),
        ])
        #expect(conversion.problems.isEmpty)
        #expect(
            conversion.properties == [
                "string": "text", "substring": "bc", "character": "x", "int": 42, "int8": -3, "uint64": 7,
                "double": 0.5, "float": 1.5, "bool": true, "date": "2026-01-01T00:00:00.250Z",
                "url": "https://example.com/a?b=c", "null": .null, "none": .null, "some": 5,
                "array": [1, "two", false], "object": ["nested": ["deep": 1]], "json": [1], "enum": "happy",
                "nsBool": true, "nsInt": 12, "nsDouble": 2.25,
            ])
    }

    @Test func unrepresentableValuesAreLeftOutAndNamed() {
        let conversion = MetadataConversion([
            "ok": 1,
            "opaque": Opaque(),
            "huge": UInt64.max,
            "nan": Double.nan,
            "list": [1, Opaque(), 3] as [Any],
            "map": ["fine": "yes", "bad": Opaque()] as [String: Any],
            "keys": [AnyHashable(1): "one", AnyHashable("two"): 2] as [AnyHashable: Any],
        ])
        #expect(
            conversion.properties == [
                "ok": 1, "list": [1, .null, 3], "map": ["fine": "yes"], "keys": ["two": 2],
            ])
        let problems = conversion.problems.map(\.description).sorted()
        #expect(
            problems == [
                "huge: 18446744073709551615 does not fit in a 64-bit signed integer",
                "keys: the key 1 is a Int, not a String",
                "list[1]: a Opaque cannot be recorded as JSON",
                "map.bad: a Opaque cannot be recorded as JSON",
                "nan: nan is not a finite number",
                "opaque: a Opaque cannot be recorded as JSON",
            ])
    }

    @Test func singleValues() {
        #expect(MetadataConversion.value(of: "a") == "a")
        #expect(MetadataConversion.value(of: Opaque()) == nil)
        #expect(MetadataConversion.value(of: [Opaque()]) == nil)
    }

    @Test func theEventIsRecordedWithoutTheBadKeyAndAdaptersSeeTheOriginal() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let adapter = SeesMetadata()
        harness.tracker.startTracking(adapters: [adapter])
        let opaque = Opaque()
        let recorded = try #require(harness.tracker.trigger(Bad(metadata: ["kept": "yes", "object": opaque])))
        #expect(recorded.properties == ["kept": "yes"])
        #expect(harness.tracker.statistics.untrackableValues == 1)
        #expect(await harness.delivered())
        #expect(adapter.sawObject.value === opaque)
        let logged = await harness.recorder.allEvents()
        #expect(logged.map(\.properties) == [["kept": "yes"]])
    }

    @Test func recordedEventsOfferPlainSwiftValues() throws {
        let event = Event(
            name: "x", sessionId: UUID(), userId: nil, anonymousId: "a",
            properties: ["s": "t", "i": 1, "d": 1.5, "b": true, "n": .null, "a": [1], "o": ["k": "v"]])
        let metadata = RecordedEvent(event).metadata
        #expect(metadata["s"] as? String == "t")
        #expect(metadata["i"] as? Int == 1)
        #expect(metadata["d"] as? Double == 1.5)
        #expect(metadata["b"] as? Bool == true)
        #expect(metadata["n"] is NSNull)
        #expect((metadata["a"] as? [Any])?.first as? Int == 1)
        #expect((metadata["o"] as? [String: Any])?["k"] as? String == "v")
        #expect(MetadataConversion(metadata).properties == event.properties)
    }
}

/// Keeps the object it found in the metadata of the last event.
final class SeesMetadata: AnalyticsAdapter, Sendable {
    let sawObject = Locked<Opaque?>(nil)
    func configure() {}
    func track(event: any TrackableEvent) {
        let object = event.metadata["object"] as? Opaque
        sawObject.withLock { $0 = object }
    }
    func track(property: any TrackableProperty) {}
}
