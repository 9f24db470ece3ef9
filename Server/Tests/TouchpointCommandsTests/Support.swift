import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

/// A recorder over a fresh directory and a Segment-style collector on 127.0.0.1, for driving
/// `touchpoint send` against.
struct SendFixture {
    static let writeKey = "wk_test"

    let directory: TemporaryDirectory
    let recorder: EventRecorder
    let collector: TestCollector
    let server: TestHTTPServer

    /// - Parameters:
    ///   - collector: the collector to serve (a fresh one by default).
    ///   - handler: answers instead of the collector (it can pass requests on to `collector.handle`).
    init(
        collector: TestCollector = TestCollector(writeKey: SendFixture.writeKey),
        handler: TestHTTPServer.Handler? = nil
    ) throws {
        directory = try TemporaryDirectory(prefix: "send")
        recorder = EventRecorder(directory: directory.url)
        self.collector = collector
        server = try TestHTTPServer(handler: handler ?? collector.handle)
    }

    /// Records `count` events named `tap` with an `index` property, returning their ids.
    @discardableResult
    func record(_ count: Int, from start: Int = 0) -> [String] {
        (start..<(start + count)).compactMap { index in
            recorder.record("tap", properties: ["index": .int(index)])?.messageId
        }
    }
}

/// Files of the SDK package that these tests share with its own tests (one copy, read in place).
enum Fixture {
    /// The repository's root: this file is `Server/Tests/TouchpointCommandsTests/Support.swift`.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The survey seed README's example config, byte for byte.
    static var seedURL: URL {
        get throws {
            let url = repository.appendingPathComponent("Tests/TouchpointSurveysTests/Fixtures/seed-survey.json")
            try #require(FileManager.default.fileExists(atPath: url.path), "missing \(url.path)")
            return url
        }
    }

    static var seedBytes: [UInt8] {
        get throws { Array(try Data(contentsOf: seedURL)) }
    }
}
