import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointRouting

struct ValueTests {
    @Test(
        arguments: [
            ("App: Opened", "App", "Opened", nil),
            ("Song: Tapped - More Info", "Song", "Tapped", "More Info"),
            ("checkout_success", "checkout_success", "", nil),
        ] as [(String, String, String, String?)])
    func identifiersReadFromNames(name: String, object: String, action: String, label: String?) {
        let identifier = EventIdentifier(name: name)
        #expect(identifier.stringValue == name)
        #expect(identifier.object == object)
        #expect(identifier.action == action)
        #expect(identifier.label == label)
    }

    @Test func identifiersFollowTheConvention() {
        #expect(EventIdentifier(object: "App", action: "Opened").stringValue == "App: Opened")
        #expect(
            EventIdentifier(object: "Song", action: "Tapped", label: "More Info").description
                == "Song: Tapped - More Info")
        #expect(
            EventIdentifier(name: "Song: Tapped - More Info")
                == EventIdentifier(object: "Song", action: "Tapped", label: "More Info"))
    }

    @Test func trackableValuesOfferTheirForms() {
        let values: [any TrackableValueType] = ["text", 42, 0.5, true, Mood.happy, EventValue.array([1])]
        #expect(values.map(\.eventValue) == ["text", 42, 0.5, true, "happy", [1]])
        #expect(values.map(\.stringValue) == ["text", "42", "0.5", "true", "happy", nil])
        #expect(values.map(\.intValue) == [nil, 42, nil, nil, nil, nil])
        #expect(values.map(\.doubleValue) == [nil, 42, 0.5, nil, nil, nil])
        #expect(values.map(\.boolValue) == [nil, nil, nil, true, nil, nil])
        #expect(Double.infinity.eventValue == .null)
    }
}
