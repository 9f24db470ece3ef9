import Dispatch
import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// The writer commits without `fsync` and ``WALSync`` flushes the WAL on a thread of its own: a
/// ticket is released only by a flush that began after its commit, a failed flush is final, and
/// nothing the storage acknowledges comes before the flush that covers it.
struct WALSyncTests {
    /// A flush the test holds until it lets it go, telling the test when it began.
    final class HeldFlush: Sendable {
        private let gate = DispatchSemaphore(value: 0)
        let began: AsyncStream<Void>
        private let beginning: AsyncStream<Void>.Continuation

        init() { (began, beginning) = AsyncStream.makeStream() }

        var flush: WALSync.Flush {
            { [self] in
                beginning.yield()
                gate.wait()
            }
        }

        func release() { gate.signal() }
    }

    @Test func aTicketIsReleasedOnlyByAFlushThatBeganAfterItsCommit() async throws {
        let held = HeldFlush()
        let sync = WALSync(flush: held.flush)
        var began = held.began.makeAsyncIterator()
        // The flush count each completion sees: the flush that released it included.
        let seen = Locked<[UInt64: Int]>([:])
        let first = sync.commit()
        let firstDone = Task { try await sync.durable(first) }
        _ = await began.next()  // the first flush runs, for the first commit only
        let second = sync.commit()
        let secondDone = Task {
            try await sync.durable(second)
            seen.withLock { $0[second] = sync.flushes }
        }
        held.release()
        try await firstDone.value
        // The first flush began before the second commit: it released the first ticket only.
        try #require(sync.durableThrough == first, "a flush released a commit made after it began")
        _ = await began.next()  // a second flush, for the commit made during the first
        held.release()
        try await secondDone.value
        #expect(seen.value[second] == 2, "released by the flush that began before its commit")
        #expect(sync.durableThrough == second)
        // Known durable: no flush.
        try await sync.durable(second)
        try await sync.durable(0)
        #expect(sync.flushes == 2)
        await sync.close()
    }

    @Test func oneFlushServesEveryCommitMadeBeforeItBegan() async throws {
        let held = HeldFlush()
        let sync = WALSync(flush: held.flush)
        var began = held.began.makeAsyncIterator()
        let tickets = (0..<5).map { _ in sync.commit() }
        let waits = tickets.map { ticket in Task { try await sync.durable(ticket) } }
        _ = await began.next()
        held.release()
        for wait in waits { try await wait.value }
        #expect(sync.flushes == 1)
        await sync.close()
    }

    @Test func aFailedFlushFailsEveryWaitingAndEveryLaterTicket() async throws {
        struct DiskError: Error {}
        let calls = Locked(0)
        // Fails once; a flush after it would succeed, and must not be believed.
        let sync = WALSync {
            let call = calls.withLock {
                $0 += 1
                return $0
            }
            if call == 1 { throw FileError(operation: "fsync", path: "/data/touchpoint.sqlite-wal", code: EIO) }
        }
        let first = sync.commit()
        let failure = await #expect(throws: StorageError.self) { try await sync.durable(first) }
        #expect(failure?.code == .database)
        #expect(
            failure?.message.contains("fsync /data/touchpoint.sqlite-wal") == true, "\(String(describing: failure))")
        let later = sync.commit()
        await #expect(throws: StorageError.self) { try await sync.durable(later) }
        #expect(throws: StorageError.self) { try sync.check() }
        #expect(calls.value == 1)
        #expect(sync.durableThrough == 0)
        await sync.close()
    }

    @Test func theStorageAnswersOnlyAfterTheWALIsFlushed() async throws {
        let directory = try TemporaryDirectory(prefix: "wal-sync")
        let path = directory.appending("touchpoint.sqlite").path
        // The real flush, counting the commits it began after.
        let backend = Locked<SQLiteBackend?>(nil)
        let startedAfter = Locked<[UInt64]>([])
        let fsync = WALSync.fsyncing(path + "-wal")
        let storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger,
            tuning: SQLiteTuning(flush: {
                startedAfter.withLock { $0.append(backend.value?.walSync.lastCommit ?? 0) }
                try fsync()
            }))
        let sqlite = try #require(storage.backend as? SQLiteBackend)
        backend.withLock { $0 = sqlite }
        #expect(try await sqlite.writerSetting("synchronous")?.int == 1, "1 is NORMAL: COMMIT does not fsync")
        #expect(try await sqlite.writerSetting("journal_mode")?.text == "wal")
        for round in 0..<3 {
            let events = (0..<10).map { TestMessages.ingest("e\(round)", properties: ["n": .int($0)]) }
            #expect(try await storage.insert(events, source: "default").allSatisfy { $0 })
            // Answered: a flush began after this write's commit (the newest).
            let commit = sqlite.walSync.lastCommit
            #expect(startedAfter.value.contains { $0 >= commit }, "answered before its commit was flushed")
            #expect(sqlite.walSync.durableThrough >= commit)
            // A resend of the same batch is answered after a flush too: its events' first copies must be on disk.
            #expect(try await storage.insert(events, source: "default").allSatisfy { !$0 })
            #expect(startedAfter.value.contains { $0 >= sqlite.walSync.lastCommit })
        }
        try await storage.close()
    }

    @Test func theFlushFindsTheWALWhereSQLiteKeepsItBesideALinkedDatabase() async throws {
        // A database path that is a symbolic link: SQLite keeps the WAL beside the file it leads
        // to, and the flush must sync that one (a `-wal` beside the link does not exist).
        let directory = try TemporaryDirectory(prefix: "wal-sync-link")
        let disk = directory.appending("disk")
        let data = directory.appending("data")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let real = disk.appendingPathComponent("events.sqlite").path
        try AtomicFile.write([], to: real, mode: 0o600)
        let link = data.appendingPathComponent("touchpoint.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        let storage = try await SQLCollectorStorage.sqlite(path: link, logger: PostgresTestEnvironment.logger)
        let sqlite = try #require(storage.backend as? SQLiteBackend)
        #expect(try await storage.insert([TestMessages.ingest("linked")], source: "default") == [true])
        #expect(sqlite.walSync.durableThrough == sqlite.walSync.lastCommit)
        #expect(FileManager.default.fileExists(atPath: real + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: link + "-wal"))
        try await storage.close()
    }

    @Test func aFlushOfAWALThatIsNotThereFails() async throws {
        let directory = try TemporaryDirectory(prefix: "wal-sync-absent")
        let sync = WALSync(flush: WALSync.fsyncing(directory.appending("nothing.sqlite-wal").path))
        let error = await #expect(throws: StorageError.self) { try await sync.durable(sync.commit()) }
        #expect(error?.message.contains("open \(directory.appending("nothing.sqlite-wal").path)") == true)
        await sync.close()
    }

    @Test func aFailedFlushRefusesWritesUntilARestartAndLosesNothing() async throws {
        let directory = try TemporaryDirectory(prefix: "wal-sync-fail")
        let path = directory.appending("touchpoint.sqlite").path
        let failing = Locked(false)
        let fsync = WALSync.fsyncing(path + "-wal")
        var storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger,
            tuning: SQLiteTuning(flush: {
                if failing.value { throw FileError(operation: "fsync", path: path + "-wal", code: EIO) }
                try fsync()
            }))
        let before = (0..<5).map { TestMessages.ingest("before", properties: ["n": .int($0)]) }
        #expect(try await storage.insert(before, source: "default").allSatisfy { $0 })
        failing.withLock { $0 = true }
        let unacknowledged = (0..<5).map { TestMessages.ingest("during", properties: ["n": .int($0)]) }
        let error = await #expect(throws: StorageError.self) {
            _ = try await storage.insert(unacknowledged, source: "default")
        }
        #expect(error?.message.contains("could not be flushed") == true)
        // Refused from then on, before the writer is asked, even with the disk back.
        failing.withLock { $0 = false }
        let later = [TestMessages.ingest("later")]
        await #expect(throws: StorageError.self) { _ = try await storage.insert(later, source: "default") }
        try await storage.close()

        // After a restart the client's retry is answered: stored now or found stored, each once.
        storage = try await SQLCollectorStorage.sqlite(path: path, logger: PostgresTestEnvironment.logger)
        _ = try await storage.insert(unacknowledged, source: "default")
        _ = try await storage.insert(later, source: "default")
        #expect(try await storage.counts(source: "default").events == 11)
        try await storage.close()
    }
}
