import Foundation

/// The append-only list of sessions in the order they started: `state/sessions.jsonl`.
///
/// It lets a reader (the delivery queue, retention) walk sessions in order from a saved byte
/// offset without listing every session folder, so nothing at start-up grows with history.
/// Entries are never rewritten; a session deleted by retention or ``EventRecorder/clear()``
/// leaves an entry whose folder is gone, which readers skip.
public struct SessionJournal: Sendable {
    /// One session start.
    public struct Entry: Sendable, Hashable {
        /// The session's id.
        public let sessionId: UUID
        /// The session's user, or nil when anonymous.
        public let userId: String?
        /// The session's folder relative to the log's base directory.
        public let directory: String
        /// When the session started.
        public let startedAt: Date
        /// Where this entry starts in the journal.
        public let offset: Int64
        /// Where the next entry starts: the offset to resume from after this one.
        public let nextOffset: Int64

        public init(
            sessionId: UUID, userId: String?, directory: String, startedAt: Date, offset: Int64 = 0,
            nextOffset: Int64 = 0
        ) {
            self.sessionId = sessionId
            self.userId = userId
            self.directory = directory
            self.startedAt = startedAt
            self.offset = offset
            self.nextOffset = nextOffset
        }
    }

    /// The journal file.
    public let path: String

    public init(layout: LogLayout) { path = layout.journalPath }

    /// Calls `body` for each entry from byte `offset` on, in start order, until `body` returns
    /// false. Damaged lines are skipped and counted in the result.
    /// - Returns: the offset after the last entry read, and how many damaged lines were skipped.
    /// - Throws: ``FileError`` when the journal exists but cannot be read, or what `body` throws.
    @discardableResult
    public func entries(from offset: Int64 = 0, _ body: (Entry) throws -> Bool) throws -> (
        end: Int64, skipped: Int
    ) {
        var skipped = 0
        let end = try JSONLinesReader(path: path, maximumLineLength: 64 * 1024).forEachLine(from: offset) { line in
            guard line.isComplete, !line.isOversized, let entry = Self.decode(line) else {
                if line.isComplete { skipped += 1 }
                return true
            }
            return try body(entry)
        }
        return (end, skipped)
    }

    /// All entries, in start order.
    public func allEntries() throws -> [Entry] {
        var result: [Entry] = []
        try entries {
            result.append($0); return true
        }
        return result
    }

    /// Appends an entry for a session that just started.
    func append(sessionId: UUID, userId: String?, directory: String, startedAt: Date) throws(FileError) {
        var writer = JSONWriter(capacity: 200)
        writer.beginObject()
        writer.key("id")
        writer.uuid(sessionId)
        if let userId {
            writer.key("userId")
            writer.string(userId)
        }
        writer.key("dir")
        writer.string(directory)
        writer.key("startedAt")
        writer.timestamp(startedAt)
        writer.endObject()
        writer.newline()
        let file = try AppendOnlyFile(path: path)
        try file.append(writer.bytes)
    }

    private static func decode(_ line: JSONLinesReader.Line) -> Entry? {
        guard case .object(let fields)? = try? JSONParser.parse(line.bytes),
            let id = fields["id"]?.stringValue.flatMap(UUID.parse),
            let directory = fields["dir"]?.stringValue,
            let startedAt = fields["startedAt"]?.stringValue.flatMap(Timestamp.parse)
        else { return nil }
        return Entry(
            sessionId: id, userId: fields["userId"]?.stringValue, directory: directory, startedAt: startedAt,
            offset: line.offset, nextOffset: line.endOffset)
    }
}
