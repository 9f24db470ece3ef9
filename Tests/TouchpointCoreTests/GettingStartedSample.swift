// The foundation's "Getting started" article's samples, as written; the test runs them (the
// files in a temporary directory instead of /tmp).
import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

struct GettingStartedSampleTests {
    @Test func theArticleRuns() throws {
        let value = try JSONParser.parse(#"{"plan":"pro","seats":3}"#)
        let seats = value["seats"]?.intValue  // 3
        let text = value.jsonString(sortedKeys: true)  // {"plan":"pro","seats":3}
        #expect(seats == 3)
        #expect(text == #"{"plan":"pro","seats":3}"#)

        let path = try JSONPath(parsing: #"surveys[1].labels["pt-BR"]"#)
        #expect("\(path)" == #"surveys[1].labels["pt-BR"]"#)

        let directory = try TemporaryDirectory()
        try AtomicFile.write(Array(text.utf8), to: directory.path + "/settings.json")
        let log = try AppendOnlyFile(path: directory.path + "/events.jsonl")
        try log.append(Array("{\"event\":\"app_opened\"}\n".utf8))
        try log.sync()
        #expect(try AtomicFile.read(directory.path + "/settings.json") == Array(text.utf8))
        let lines = try String(contentsOfFile: directory.path + "/events.jsonl", encoding: .utf8)
        #expect(lines == "{\"event\":\"app_opened\"}\n")
    }
}
