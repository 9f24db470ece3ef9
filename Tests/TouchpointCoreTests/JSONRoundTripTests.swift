import Testing
import TouchpointCore

struct JSONRoundTripTests {
    @Test(arguments: [
        #"{"a":1,"b":[true,false,null],"c":"x\ny","d":-0.5,"e":{"f":"ü😀"}}"#,
        #"[]"#,
        #"{}"#,
        #""\u0000\u001f\"\\""#,
        #"-9223372036854775808"#,
        #"1e300"#,
    ])
    func parsesAndWritesBack(text: String) throws {
        let value = try JSONParser.parse(text)
        let written = value.jsonString(sortedKeys: true)
        #expect(try JSONParser.parse(written) == value)
    }

    @Test func sortedKeysAreStable() {
        let value: JSONValue = ["b": 1, "a": ["d": 2, "c": 3]]
        #expect(value.jsonString(sortedKeys: true) == #"{"a":{"c":3,"d":2},"b":1}"#)
    }
}
