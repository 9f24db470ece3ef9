import Testing
import TouchpointCore

struct HTTPHeadersTests {
    @Test func lookupsIgnoreCaseAndKeepTheGivenSpelling() {
        var headers: TransportHeaders = ["Content-Type": "application/json", "X-Tag": "a"]
        headers.add(name: "x-tag", value: "b")
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers.values(for: "X-TAG") == ["a", "b"])
        #expect(headers.contains("x-Tag"))
        #expect(!headers.contains("X-Ta"))
        #expect(headers.fields.map(\.name) == ["Content-Type", "X-Tag", "x-tag"])
    }

    @Test func settingReplacesEveryFieldOfThatNameAndNilRemovesThem() {
        var headers: TransportHeaders = ["A": "1", "B": "2", "a": "3"]
        headers["a"] = "9"
        #expect(headers.fields == [.init(name: "a", value: "9"), .init(name: "B", value: "2")])
        headers["A"] = nil
        #expect(headers.fields == [.init(name: "B", value: "2")])
        headers["C"] = "new"
        #expect(headers.count == 2)
        #expect(headers.description == "B: 2\nC: new")
    }

    @Test func namesDifferingOnlyOutsideASCIICaseAreDifferent() {
        let headers: TransportHeaders = ["Straße": "1"]
        #expect(headers["STRASSE"] == nil)
        #expect(headers["straße"] == "1")
    }
}
