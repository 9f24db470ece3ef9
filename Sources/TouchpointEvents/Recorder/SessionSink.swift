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
    private let fileOptions: MappedLogFile.Options
    private var file: MappedLogFile? {
        didSet { borrowedFile = file.map { Unmanaged.passUnretained($0) } }
    }
    /// `file`, for calls that must not retain it: a log has a weak-reference side table (the
    /// registry of open logs), which makes each retain and release take the slow path.
    private var borrowedFile: Unmanaged<MappedLogFile>?
    private var metadataWritten: Bool
    private var journaled: Bool
    /// Bytes of a torn last line cut off when the file was opened.
    private(set) var repairedBytes: Int64 = 0
    /// Whether writes happened since the last `fsync`.
    var needsSync = false

    var eventsPath: String { directoryPath + "/events.jsonl" }
    var metadataPath: String { directoryPath + "/session.json" }

    init(session: EventSession, layout: LogLayout, alreadyOnDisk: Bool, fileOptions: MappedLogFile.Options) {
        self.session = session
        self.fileOptions = fileOptions
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
            let opened = try MappedLogFile.open(path: eventsPath, options: fileOptions)
            repairedBytes += opened.repairedBytes
            file = opened
        }
    }

    /// Appends whole lines to `events.jsonl`; `prepare` must have succeeded.
    func append(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        guard let borrowedFile else { throw FileError(operation: "write", path: eventsPath, code: 9 /* EBADF */) }
        do {
            // Safe: `file` holds the log, and only this call (under the recorder's lock) could
            // let go of it, after the append.
            let result = borrowedFile._withUnsafeGuaranteedRef { file in
                Result { () throws(FileError) in try file.append(bytes) }
            }
            try result.get()
        } catch {
            // Reopen on the next attempt: the file may have been replaced, or its device remounted.
            self.file = nil
            throw error
        }
        needsSync = true
    }

    /// The bytes of this session's lines from `sessionId` to the `properties` key, for
    /// ``EventLineEncoder``; made again when the anonymous id changes.
    func lineTail(anonymousId: String) -> [UInt8] {
        if let tail, tail.anonymousId == anonymousId { return tail.bytes }
        let bytes = EventLineEncoder.tail(sessionId: session.id, userId: session.userId, anonymousId: anonymousId)
        tail = (anonymousId, bytes)
        return bytes
    }
    private var tail: (anonymousId: String, bytes: [UInt8])?

    /// The log file, for syncing outside the lock (also after ``close()``).
    var openFile: MappedLogFile? { file ?? closedFile }
    private var closedFile: MappedLogFile?

    /// Truncates the log to its records and releases it for other writers (the session ended).
    /// Lines still waiting in memory for this session reopen it.
    func close() {
        guard let file else { return }
        file.close()
        closedFile = file
        self.file = nil
    }

    /// Whether the session's `session.json` is on disk (a session started while the user opted
    /// out has no files until an event).
    var isOnDisk: Bool { metadataWritten }

    /// Rewrites `session.json` (after the session ended).
    func writeMetadata(durable: Bool) throws(FileError) {
        try AtomicFile.write(session.jsonBytes(), to: metadataPath, durable: durable)
        metadataWritten = true
    }
}
