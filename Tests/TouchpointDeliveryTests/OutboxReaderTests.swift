import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointDelivery
import TouchpointEvents
import TouchpointTesting

@testable import TouchpointDelivery

/// Reading batches straight from the recorder's files: journal order, byte offsets, limits,
/// whole lines only, and the Segment message format.
struct OutboxReaderTests {
    let directory: TemporaryDirectory
    let clock = ManualClock()
    let recorder: EventRecorder
    let reader: OutboxReader

    init() throws {
        directory = try TemporaryDirectory(prefix: "outbox")
        var configuration = EventRecorderConfiguration()
        configuration.clock = clock
        configuration.retention = .keepEverything
        recorder = EventRecorder(directory: directory.url, configuration: configuration)
        reader = OutboxReader(directory: directory.url, library: .touchpoint, logger: Logger(label: "test"))
    }

    /// The messages of a batch, parsed.
    static func messages(_ batch: OutboxBatch) throws -> [JSONValue] {
        let body = BatchEnvelope.body(messages: batch.messages, sentAt: Date(timeIntervalSince1970: 0))
        return try #require(try JSONParser.parse(body)["batch"]?.arrayValue)
    }

    /// Reads everything from `cursor` in batches of `limits`.
    func drain(from cursor: DeliveryCursor = .start, limits: BatchLimits = .segment) -> (
        batches: [OutboxBatch], end: DeliveryCursor
    ) {
        var cursor = cursor
        var batches: [OutboxBatch] = []
        while true {
            let batch = reader.read(from: cursor, limits: limits)
            #expect(batch.start == cursor)
            cursor = batch.end
            if batch.count == 0 { return (batches, cursor) }
            batches.append(batch)
        }
    }

    @Test func sessionsAreReadInJournalOrderAcrossUsers() async throws {
        var recorded: [UUID] = []
        for (index, user) in ["alice", nil, "bob", "alice"].enumerated() {
            await recorder.startSession(userID: user)
            for step in 0..<3 {
                recorded.append(
                    try #require(recorder.record("step", properties: ["session": .int(index), "step": .int(step)])).id)
            }
        }
        let (batches, end) = drain(limits: BatchLimits(maximumEvents: 5))
        #expect(batches.map(\.count) == [5, 5, 2])
        #expect(batches.flatMap(\.messageIds) == recorded)
        // Nothing more, and reading again from the end finds nothing.
        let again = reader.read(from: end, limits: .segment)
        #expect(again.count == 0)
        #expect(again.reachedEnd)
        #expect(again.end == end)
    }

    @Test func theMessageFormatIsSegments() async throws {
        await recorder.startSession(userID: "u1")
        let track = try #require(recorder.record("checkout", properties: ["amount": 120, "coupon": "SPRING"]))
        let identify = try #require(recorder.record("identify", properties: ["plan": "pro"], type: .identify))
        let screen = try #require(recorder.record("Home", properties: ["tab": 2], type: .screen))
        let messages = try Self.messages(reader.read(from: .start, limits: .segment))
        #expect(messages.count == 3)
        let library: JSONValue = ["name": "touchpoint-swift", "version": .string(DeliveryLibrary.touchpoint.version)]
        #expect(
            messages[0]
                == [
                    "type": "track", "event": "checkout", "messageId": .string(track.messageId),
                    "timestamp": .string(Timestamp.format(track.timestamp)), "userId": "u1",
                    "anonymousId": .string(track.anonymousId), "properties": ["amount": 120, "coupon": "SPRING"],
                    "context": ["sessionId": .string(track.sessionId.uuidString), "library": library],
                ])
        #expect(messages[1]["type"] == "identify")
        #expect(messages[1]["traits"] == ["plan": "pro"])
        #expect(messages[1]["properties"] == nil)
        #expect(messages[1]["event"] == nil)
        #expect(messages[1]["messageId"] == .string(identify.messageId))
        #expect(messages[2]["type"] == "screen")
        #expect(messages[2]["name"] == "Home")
        #expect(messages[2]["properties"] == ["tab": 2])
        #expect(messages[2]["messageId"] == .string(screen.messageId))
    }

    @Test func anonymousEventsHaveNoUserId() async throws {
        recorder.record("open")
        let messages = try Self.messages(reader.read(from: .start, limits: .segment))
        #expect(messages.first?["userId"] == nil)
        #expect(messages.first?["anonymousId"]?.stringValue?.isEmpty == false)
    }

    @Test func batchesStayUnderTheByteLimit() async throws {
        let padding = String(repeating: "p", count: 900)
        for index in 0..<50 { recorder.record("big", properties: ["index": .int(index), "padding": .string(padding)]) }
        let limits = BatchLimits(maximumBytes: 10_000, maximumEventBytes: 2_000)
        let (batches, _) = drain(limits: limits)
        #expect(batches.reduce(0) { $0 + $1.count } == 50)
        for batch in batches {
            let body = BatchEnvelope.body(messages: batch.messages, sentAt: Date())
            #expect(body.count <= 10_000)
            #expect(body.count == batch.bodySize)
        }
        #expect(batches.count > 4)
    }

    @Test func aResumedReadStartsAfterTheLastDeliveredLine() async throws {
        for index in 0..<10 { recorder.record("e", properties: ["index": .int(index)]) }
        let first = reader.read(from: .start, limits: BatchLimits(maximumEvents: 4))
        let rest = reader.read(from: first.end, limits: .segment)
        let indexes = try Self.messages(rest).map { $0["properties"]?["index"]?.intValue }
        #expect(indexes == Array(4..<10))
    }

    @Test func onlyWholeLinesAreReadWhileTheSessionGrows() async throws {
        let session = await recorder.startSession(userID: "u1")
        recorder.record("first")
        // The log as another process writes it with write(2): closed here, growing by raw appends.
        await recorder.endSession()
        let path =
            directory.path + "/"
            + LogLayout(base: directory.url).relativeSessionDirectory(
                userId: "u1", sessionId: session.id) + "/events.jsonl"
        // Half of the next line is on disk, as a concurrent writer would leave it for an instant.
        let next = Event(name: "second", sessionId: session.id, userId: "u1", anonymousId: "a").jsonLine()
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(next.prefix(20)))
        let partial = reader.read(from: .start, limits: .segment)
        #expect(partial.count == 1)
        #expect(partial.reachedEnd)
        try handle.write(contentsOf: Data(next.dropFirst(20)))
        try handle.close()
        let rest = reader.read(from: partial.end, limits: .segment)
        #expect(try Self.messages(rest).map { $0["event"] } == ["second"])
    }

    @Test func oversizedAndDamagedLinesAreConsumedButNeverSent() async throws {
        let session = await recorder.startSession(userID: "u1")
        recorder.record("before")
        await recorder.endSession()  // the rest is written by hand, as another writer would
        let path =
            directory.path + "/"
            + LogLayout(base: directory.url).relativeSessionDirectory(
                userId: "u1", sessionId: session.id) + "/events.jsonl"
        let huge = Event(
            name: "huge", sessionId: session.id, userId: "u1", anonymousId: "a",
            properties: ["blob": .string(String(repeating: "x", count: 40_000))])
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(huge.jsonLine()))
        try handle.write(contentsOf: Data("{not json}\n".utf8))
        try handle.write(
            contentsOf: Data(Event(name: "after", sessionId: session.id, userId: "u1", anonymousId: "a").jsonLine()))
        try handle.close()
        let batch = reader.read(from: .start, limits: .segment)
        #expect(try Self.messages(batch).map { $0["event"] } == ["before", "after"])
        #expect(batch.oversized.map(\.messageId) == [huge.id])
        #expect(batch.end.eventOffset == Int64(try Data(contentsOf: URL(fileURLWithPath: path)).count))
    }

    @Test func aDeletedSessionIsSkipped() async throws {
        let first = await recorder.startSession(userID: "gone")
        recorder.record("lost")
        await recorder.startSession(userID: "kept")
        recorder.record("kept")
        try FileManager.default.removeItem(
            atPath: directory.path + "/"
                + LogLayout(base: directory.url).relativeSessionDirectory(
                    userId: "gone", sessionId: first.id))
        let batch = reader.read(from: .start, limits: .segment)
        #expect(try Self.messages(batch).map { $0["event"] } == ["kept"])
    }

    @Test func aReplacedJournalIsReadAgainFromItsStart() async throws {
        await recorder.startSession(userID: "u1")
        recorder.record("old")
        let delivered = reader.read(from: .start, limits: .segment).end
        // Another process cleared the log and recorded again: the cursor names a session that is gone.
        await recorder.clear()
        let other = EventRecorder(directory: directory.url)
        await other.startSession(userID: "u2")
        other.record("new")
        let batch = reader.read(from: delivered, limits: .segment)
        #expect(try Self.messages(batch).map { $0["event"] } == ["new"])
        #expect(batch.start == .start)
    }

    @Test func theEndOfTheLogAndTheBacklog() async throws {
        #expect(reader.end(from: .start) == .start)
        await recorder.startSession(userID: "u1")
        recorder.record("a")
        await recorder.startSession(userID: "u2")
        let event = try #require(recorder.record("b"))
        let end = reader.end(from: .start)
        #expect(end.sessionId == event.sessionId)
        let all = drain().end
        #expect(all == end)
        let backlog = reader.backlog(from: .start)
        #expect(backlog.sessions == 2)
        #expect(backlog.bytes == Int64(event.jsonLine().count * 2))
        #expect(reader.backlog(from: all) == DeliveryBacklog())
    }
}
