import Foundation
import Testing

/// `import Touchpoint` brings Touchpoint's own modules and nothing else: a re-exported module of
/// another package would put its names (`Publisher`, `HTTPRequest`, …) into every file of an app
/// that imports the SDK, where they can clash with the app's own dependencies.
struct ReexportTests {
    @Test func everyReexportedModuleIsTouchpointsOwn() throws {
        let sources = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var reexports: [String: [String]] = [:]
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                guard words.count >= 3, words[0] == "@_exported", words[1] == "import" else { continue }
                reexports[String(words[2]), default: []].append(file.lastPathComponent)
            }
        }
        // The umbrella's re-exports are the proof that the scan sees them.
        #expect(reexports["TouchpointCore"] != nil)
        #expect(reexports["TouchpointStore"] != nil)
        let foreign = reexports.filter { !$0.key.hasPrefix("Touchpoint") }
        #expect(foreign.isEmpty, "re-exported from another package: \(foreign)")
    }
}
