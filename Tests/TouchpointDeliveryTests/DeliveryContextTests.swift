import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

@testable import TouchpointDelivery

/// Segment's standard context in every message, and batches that stay within 500,000 bytes.
struct DeliveryContextTests {
    static let shop = DeliveryContext(
        app: .init(name: "Shop", version: "2.1", build: "210", namespace: "com.example.shop"),
        deviceManufacturer: "Apple", deviceModel: "iPhone15,2", deviceType: "ios", osName: "iOS", osVersion: "17.4.1",
        locale: "en-US", timezone: "Europe/Berlin")

    /// The first message a reader over a fresh log with one recorded event writes, as text.
    static func firstMessage(context: DeliveryContext?) async throws -> String {
        let directory = try TemporaryDirectory(prefix: "delivery-context")
        let recorder = EventRecorder(directory: directory.url)
        await recorder.startSession(userID: "u1")
        try #require(recorder.record("checkout", properties: ["amount": 120]) != nil)
        let reader = OutboxReader(
            directory: directory.url, library: .touchpoint, context: context, logger: Logger(label: "test"))
        let batch = reader.read(from: .start, limits: .segment)
        let body = BatchEnvelope.body(messages: batch.messages, sentAt: Date(timeIntervalSince1970: 0))
        let messages = try #require(try JSONParser.parse(body)["batch"]?.arrayValue)
        #expect(messages.count == 1)
        return messages[0].jsonString()
    }

    @Test func everyMessageCarriesTheStandardContext() async throws {
        var context = Self.shop
        context.screen = (width: 393, height: 852)
        let text = try await Self.firstMessage(context: context)
        let message = try JSONParser.parse(Array(text.utf8))
        let sent = try #require(message["context"])
        #expect(sent["app"] == ["name": "Shop", "version": "2.1", "build": "210", "namespace": "com.example.shop"])
        #expect(sent["device"] == ["manufacturer": "Apple", "model": "iPhone15,2", "type": "ios"])
        #expect(sent["os"] == ["name": "iOS", "version": "17.4.1"])
        #expect(sent["screen"] == ["width": 393, "height": 852])
        #expect(sent["locale"] == "en-US")
        #expect(sent["timezone"] == "Europe/Berlin")
        #expect(sent["library"]?["name"] == "touchpoint-swift")
        #expect(sent["sessionId"]?.stringValue?.isEmpty == false)
        #expect(Set(sent.objectValue?.keys.map { $0 } ?? []).count == 8)
    }

    @Test func noMemberIsWrittenTwice() async throws {
        // A parser keeps the last of a repeated name, so compare the raw message's member count
        // with what is expected: each context member once.
        let directory = try TemporaryDirectory(prefix: "delivery-context")
        let recorder = EventRecorder(directory: directory.url)
        try #require(recorder.record("e") != nil)
        let reader = OutboxReader(
            directory: directory.url, library: .touchpoint, context: Self.shop, logger: Logger(label: "test"))
        let raw = String(decoding: reader.read(from: .start, limits: .segment).messages, as: UTF8.self)
        for key in [
            "\"context\":", "\"app\":", "\"device\":", "\"os\":", "\"locale\":", "\"timezone\":", "\"library\":",
        ] {
            #expect(raw.components(separatedBy: key).count == 2, "\(key) appears once")
        }
    }

    @Test func withoutAContextOnlyTheSessionAndLibraryAreSent() async throws {
        let message = try JSONParser.parse(Array(try await Self.firstMessage(context: nil).utf8))
        #expect(Set(message["context"]?.objectValue?.keys.map { $0 } ?? []) == ["sessionId", "library"])
    }

    @Test func membersLeftUnsetAreLeftOut() async throws {
        let partial = DeliveryContext(osName: "Linux", timezone: "UTC")
        let message = try JSONParser.parse(Array(try await Self.firstMessage(context: partial).utf8))
        #expect(message["context"]?["os"] == ["name": "Linux"])
        #expect(message["context"]?["app"] == nil)
        #expect(message["context"]?["device"] == nil)
        #expect(message["context"]?["timezone"] == "UTC")
    }

    @Test func thisProcesssContextNamesItsPlatform() {
        let current = DeliveryContext.current
        #expect(current.osName == DeliveryContext.platform.os)
        #expect(current.osVersion?.split(separator: ".").count ?? 0 >= 2)
        #expect(current.deviceModel?.isEmpty == false)
        #expect(current.timezone == TimeZone.current.identifier)
        #expect(DeliveryConfiguration().context == current)
    }

    @Test func theFullestBatchStaysWithin500000Bytes() async throws {
        // Events of the largest size the recorder takes, many of them: the body the reader builds
        // never passes 500,000 bytes (Segment's "500 KB", read the strict way).
        let directory = try TemporaryDirectory(prefix: "delivery-cap")
        var configuration = EventRecorderConfiguration()
        configuration.retention = .keepEverything
        let recorder = EventRecorder(directory: directory.url, configuration: configuration)
        let filler = String(repeating: "x", count: 31 * 1024)
        for index in 0..<40 {
            try #require(recorder.record("big", properties: ["i": .int(index), "blob": .string(filler)]) != nil)
        }
        let reader = OutboxReader(
            directory: directory.url, library: .touchpoint, context: Self.shop, logger: Logger(label: "test"))
        var cursor = DeliveryCursor.start
        var sizes: [Int] = []
        while true {
            let batch = reader.read(from: cursor, limits: .segment)
            if batch.count == 0 { break }
            sizes.append(BatchEnvelope.body(messages: batch.messages, sentAt: Date()).count)
            cursor = batch.end
        }
        #expect(BatchLimits.segment.maximumBytes == 500_000)
        #expect(sizes.count >= 3)
        #expect(sizes.allSatisfy { $0 <= 500_000 }, "\(sizes)")
        #expect(sizes.max() ?? 0 > 450_000, "batches are filled: \(sizes)")
    }
}
