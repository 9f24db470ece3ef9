import Foundation

/// The open files of one session: its folder, `session.json`, `events.jsonl` and its journal entry.
///
/// Created before anything touches the disk, so a session can exist (and collect events in the
/// memory buffer) while the disk refuses writes; ``prepare(layout:journal:)`` does whatever is
/// still missing and is retried until it succeeds.
final class SessionSink: @unchecked Sendable {
    // Safe: every member is read and written only while the recorder's lock is held, except
    // `syncIfOpen()`, which only reads the immutable file reference's descriptor.
    var session: EventSession
    let relativeDirectory: String
    let directoryPath: String
    private var file: AppendOnlyFile?
    private var metadataWritten: Bool
    private var journaled: Bool
    /// Bytes of a torn last line cut off when the file was opened.
    private(set) var repairedBytes: Int64 = 0
    /// Whether writes happened since the last `fsync`.
    var needsSync = false

    var eventsPath: String { directoryPath + "/events.jsonl" }
    var metadataPath: String { directoryPath + "/session.json" }

    init(session: EventSession, layout: LogLayout, alreadyOnDisk: Bool) {
        self.session = session
        relativeDirectory = layout.relativeSessionDirectory(userId: session.userId, sessionId: session.id)
        directoryPath = layout.path(relativeDirectory)
        metadataWritten = alreadyOnDisk
        journaled = alreadyOnDisk
    }

    /// Creates whatever of the session's files is still missing and opens the log.
    func prepare(layout: LogLayout, journal: SessionJournal) throws(FileError) {
        if file != nil && metadataWritten && journaled { return }
        try AtomicFile.createDirectory(directoryPath)
        if !metadataWritten {
            try AtomicFile.write(session.jsonBytes(), to: metadataPath, durable: false)
            metadataWritten = true
        }
        if !journaled {
            try AtomicFile.createDirectory(layout.statePath)
            try journal.append(
                sessionId: session.id, userId: session.userId, directory: relativeDirectory,
                startedAt: session.startedAt)
            journaled = true
        }
        if file == nil {
            let opened = try AppendOnlyFile(path: eventsPath)
            repairedBytes += opened.repairedBytes
            file = opened
        }
    }

    /// Appends whole lines to `events.jsonl`; `prepare` must have succeeded.
    func append(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        guard let file else { throw FileError(operation: "write", path: eventsPath, code: 9 /* EBADF */) }
        do {
            try file.append(bytes)
        } catch {
            // Reopen on the next attempt: the file may have been replaced, or its device remounted.
            self.file = nil
            throw error
        }
        needsSync = true
    }

    /// The open log file, for syncing outside the lock.
    var openFile: AppendOnlyFile? { file }

    /// Rewrites `session.json` (after the session ended).
    func writeMetadata(durable: Bool) throws(FileError) {
        try AtomicFile.write(session.jsonBytes(), to: metadataPath, durable: durable)
        metadataWritten = true
    }
}
