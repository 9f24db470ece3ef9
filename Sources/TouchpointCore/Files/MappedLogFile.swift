import Dispatch

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// A log of terminated records (JSON Lines) appended through a memory mapping: an append is a
/// memory copy, with no system call.
///
/// ```swift
/// let log = try MappedLogFile.open(path: directory + "/events.jsonl")
/// try log.append(Array("{\"name\":\"button_tap\"}\n".utf8))  // in the page cache: survives a kill
/// try log.sync()                                              // on stable storage
/// log.close()                                                 // the file is exactly its records
/// ```
///
/// **How an append works.** A segment of the file (``Options/segmentBytes``, whole pages of the
/// size the system reports at run time: 4 KB on most Linux machines, 16 KB on iOS devices) is
/// mapped shared into memory. ``append(_:)`` copies a record into it, its terminator last, and
/// publishes the new ``committedLength`` under the file's lock. The bytes are in the kernel's page
/// cache from that moment, so they survive the process being killed, exactly as after a `write(2)`.
/// When a record would cross the end of the segment, the next segment takes over (rotation): the
/// growth queue maps it ahead, overlapping the current one by half a segment, and faults its pages
/// in, so a rotation on the caller's thread swaps two references and hands the old segment to the
/// queue to unmap.
///
/// **Growth off the caller's thread.** Only space the file system has already allocated is ever
/// touched through the mapping: a background queue allocates ``Options/growthBytes`` ahead of the
/// committed length (`posix_fallocate`, or written zeros where the file system cannot allocate),
/// so a full disk is an error of that queue, never a `SIGBUS` in the app. When the allocated
/// space runs out (the queue is behind, or the disk is full), an append falls back to `pwrite(2)`
/// at the committed length, which reports a full disk as ``FileError/isOutOfSpace``. When a record
/// would cross the end of the mapped segment and the next one is not mapped yet (the queue is
/// behind, or the record is longer than half a segment), the caller maps it.
///
/// **On disk.** While the file is open it ends with allocated zero bytes after the last record;
/// readers skip them (``JSONLinesReader`` does). ``close()`` (and the release of the last
/// reference) truncates the file to its committed length, so a closed log is exactly its records.
/// Opening a log cuts whatever follows its last terminator: a record torn by a kill and the zeros
/// of a writer that never closed.
///
/// **One writer.** ``open(path:terminator:options:)`` gives every opener in a process the same
/// object while it is open, and holds an exclusive `flock` on the file, so another process cannot
/// open it and cut the space this one writes into (it gets an `EWOULDBLOCK` error). Appends are
/// serialized by the file's own lock; ``sync()`` may run on any thread.
public final class MappedLogFile: @unchecked Sendable {
    // Safe: the mutable state lives in `state`, behind its lock; `growth` serializes what the
    // growth queue and the `pwrite` fallback do beyond the allocated end.

    /// How a mapped log is written.
    public struct Options: Sendable, Hashable {
        /// How much of the file is mapped at a time (rounded up to whole pages; at least two).
        public var segmentBytes: Int
        /// How far ahead of the committed length the file is allocated, off the caller's thread
        /// (rounded up to whole pages).
        public var growthBytes: Int
        /// Whether appends go through a mapping; false writes every record with `pwrite(2)`.
        public var mapsFile: Bool

        /// - Parameters:
        ///   - segmentBytes: the mapped window, 4 MB by default.
        ///   - growthBytes: the allocation step, 1 MB by default.
        ///   - mapsFile: whether to map the file at all.
        public init(segmentBytes: Int = 4 << 20, growthBytes: Int = 1 << 20, mapsFile: Bool = true) {
            self.segmentBytes = segmentBytes
            self.growthBytes = growthBytes
            self.mapsFile = mapsFile
        }
    }

    /// Counters of how appends were made, for tests and statistics.
    public struct Statistics: Sendable, Hashable {
        /// Records copied into the mapping.
        public var mappedAppends = 0
        /// Records written with `pwrite(2)` (no allocated space, or no mapping).
        public var writtenAppends = 0
        /// Segments mapped after the first (rotations).
        public var rotations = 0
        /// Rotations into a segment the growth queue had mapped ahead (no system call on the
        /// appending thread).
        public var preparedRotations = 0
        /// Allocations the growth queue could not make (a full disk).
        public var growthFailures = 0

        public init() {}
    }

    /// The size of a memory page, read from the system at run time.
    public static let pageSize: Int = {
        let size = sysconf(Int32(_SC_PAGESIZE))
        return size > 0 ? size : 4096
    }()

    /// The file's path.
    public let path: String
    /// The options it was opened with.
    public let options: Options
    /// How many bytes of a torn last record were cut when the file was opened (the zeros a
    /// previous writer had allocated are not counted).
    public let repairedBytes: Int64

    private let descriptor: Int32
    private let terminator: UInt8
    private let identity: FileIdentity
    private let isRegularFile: Bool
    private let segmentBytes: Int
    private let growthBytes: Int64
    private let state: Locked<State>
    /// Held by whoever works past the allocated end: the growth queue, or a `pwrite` fallback.
    private let growth = Locked(())

    private struct State {
        /// The committed length: the end of the last whole record.
        var length: Int64
        /// The end of the space the file system has allocated (never past the file's size).
        var allocated: Int64
        /// The mapped segment, and the end of the space an append may copy into now.
        var mapping: Mapping?
        var limit: Int64 = 0
        /// The segment after `mapping`, mapped ahead by the growth queue, and where its pages
        /// stop being faulted in.
        var next: Mapping?
        var nextUnpopulated: Int64 = 0
        /// Segments a rotation let go of, for the growth queue to unmap.
        var retired: [Mapping] = []
        var growing = false
        var closed = false
        /// Where pages have not yet been faulted in writable (Linux), from here to `allocated`.
        var unpopulated: Int64
        var statistics = Statistics()
    }

    /// One mapped window of the file; unmapped when its last user lets go of it.
    private final class Mapping: @unchecked Sendable {
        // Safe: immutable after init; the memory is written only under the log's lock.
        let base: UnsafeMutableRawPointer
        let offset: Int64
        let size: Int
        var end: Int64 { offset + Int64(size) }

        init(base: UnsafeMutableRawPointer, offset: Int64, size: Int) {
            self.base = base
            self.offset = offset
            self.size = size
        }

        deinit { munmap(base, size) }
    }

    // MARK: Opening

    /// Opens (creating when absent) the log at `path` for appending, cutting whatever follows its
    /// last whole record; when this process already has it open, returns that object.
    /// - Parameters:
    ///   - path: the file; its directory must exist.
    ///   - terminator: the byte that ends every record, `\n` for JSON Lines.
    ///   - options: the segment and growth sizes, or no mapping at all (used when the file is
    ///     not open yet).
    /// - Throws: ``FileError`` when the file cannot be opened, locked (`flock`: another process
    ///   writes it), inspected or repaired.
    public static func open(
        path: String, terminator: UInt8 = UInt8(ascii: "\n"), options: Options = Options()
    ) throws(FileError) -> MappedLogFile {
        let descriptor = systemOpen(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileError.current("open", path) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let error = FileError.current("fstat", path)
            _ = systemClose(descriptor)
            throw error
        }
        let identity = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        let result: Result<MappedLogFile, FileError> = openFiles.withLock { open in
            if let existing = open[identity]?.file {
                _ = systemClose(descriptor)
                return .success(existing)
            }
            do throws(FileError) {
                let file = try MappedLogFile(
                    path: path, descriptor: descriptor, info: info, identity: identity, terminator: terminator,
                    options: options)
                open[identity] = WeakFile(file: file)
                return .success(file)
            } catch {
                _ = systemClose(descriptor)
                return .failure(error)
            }
        }
        let file = try result.get()
        // The first step now (session starts are rare, and this spares the first events a
        // write(2) each); the next, and faulting the pages in, on the growth queue.
        if file.options.mapsFile && file.isRegularFile && file.state.withLock({ $0.allocated <= $0.length }) {
            _ = file.grow(atLeast: 0, clearsRequest: false, populates: false)
        }
        file.requestGrowth()
        return file
    }

    private init(
        path: String, descriptor: Int32, info: stat, identity: FileIdentity, terminator: UInt8, options: Options
    ) throws(FileError) {
        self.path = path
        self.options = options
        self.terminator = terminator
        self.descriptor = descriptor
        self.identity = identity
        let page = Self.pageSize
        segmentBytes = max(2, (max(options.segmentBytes, 1) + page - 1) / page) * page
        growthBytes = Int64(max(1, (max(options.growthBytes, 1) + page - 1) / page) * page)
        isRegularFile = (info.st_mode & S_IFMT) == S_IFREG
        if isRegularFile, flock(descriptor, LOCK_EX | LOCK_NB) != 0 { throw FileError.current("flock", path) }
        let size = isRegularFile ? Int64(info.st_size) : 0
        let tail = try LogFileScan.tail(descriptor, size: size, terminator: terminator, path: path)
        if tail.whole < size, ftruncate(descriptor, off_t(tail.whole)) != 0 {
            throw FileError.current("ftruncate", path)
        }
        repairedBytes = tail.tornBytes
        state = Locked(State(length: tail.whole, allocated: tail.whole, unpopulated: tail.whole))
    }

    deinit {
        close()
        _ = systemClose(descriptor)
    }

    // MARK: Appending

    /// Appends one or more whole records (the last byte must be the terminator).
    ///
    /// A copy into the mapping when allocated space is left; otherwise a `pwrite(2)`. Nothing is
    /// committed unless the whole record is.
    /// - Throws: ``FileError`` (``FileError/isOutOfSpace`` when the disk is full), or `EBADF`
    ///   after ``close()``.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        let count = bytes.count
        guard count > 0, let source = bytes.baseAddress else { return }
        let copied: (done: Bool, wantsGrowth: Bool) = state.withLock { state in
            let end = state.length + Int64(count)
            guard end <= state.limit, let mapping = state.mapping else { return (false, false) }
            Self.copy(source, count, to: mapping, at: state.length)
            state.length = end
            state.statistics.mappedAppends += 1
            guard !state.growing, state.allocated - end < growthBytes / 2 else { return (true, false) }
            state.growing = true
            return (true, true)
        }
        if copied.wantsGrowth { scheduleGrowth() }
        if !copied.done { try appendSlowly(bytes) }
    }

    /// Appends one or more whole records.
    public func append(_ bytes: [UInt8]) throws(FileError) {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(FileError) in try append(raw) } }
        try result.get()
    }

    /// The committed length: the end of the last whole record, published after each append.
    /// Everything before it is in the file (any reader of the file sees it).
    public var committedLength: Int64 { state.withLock { $0.length } }

    /// The committed length of the log at `path` if this process has it open, nil otherwise.
    public static func committedLength(ofFileAt path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let identity = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        return openFiles.withLock { $0[identity]?.file }?.committedLength
    }

    /// Where the whole records of the log at `path` end: its committed length when this process
    /// has it open, otherwise the offset just past its last terminator (a log another process
    /// writes, or one a killed writer left with allocated space). Nil when it cannot be read.
    public static func recordsLength(ofFileAt path: String, terminator: UInt8 = UInt8(ascii: "\n")) -> Int64? {
        if let committed = committedLength(ofFileAt: path) { return committed }
        let descriptor = systemOpen(path, O_RDONLY | O_CLOEXEC, 0)
        guard descriptor >= 0 else { return nil }
        defer { _ = systemClose(descriptor) }
        guard let size = try? LogFileScan.size(descriptor, path: path) else { return nil }
        return try? LogFileScan.tail(descriptor, size: size, terminator: terminator, path: path).whole
    }

    /// Counters of how appends were made.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Whether appends currently go through a mapping.
    public var isMapped: Bool { state.withLock { $0.mapping != nil } }

    /// Flushes everything committed so far to stable storage (`msync` on Apple platforms, then
    /// `fsync`). Any thread.
    public func sync() throws(FileError) {
        #if canImport(Darwin)
        if let mapping = state.withLock({ $0.mapping }) {
            if msync(mapping.base, mapping.size, MS_SYNC) != 0 && errno != ENOMEM {
                throw FileError.current("msync", path)
            }
        }
        #endif
        if fsync(descriptor) != 0 { throw FileError.current("fsync", path) }
    }

    /// The last whole record (without its terminator), or nil when there is none or it is longer
    /// than `maximumLength`.
    public func lastRecord(maximumLength: Int = 64 * 1024) throws(FileError) -> [UInt8]? {
        try LogFileScan.lastRecord(
            descriptor, end: committedLength, terminator: terminator, maximumLength: maximumLength, path: path)
    }

    /// Unmaps the file, truncates it to its committed length and lets other writers open it:
    /// from now on the file is exactly its records. Later appends fail with `EBADF`; ``sync()``
    /// still works. Idempotent.
    public func close() {
        // After any growth step in progress: none may extend the file once it is truncated.
        let closed = growth.withLock { _ in closeLocked() }
        guard closed else { return }
        Self.openFiles.withLock { open in
            if open[identity].map({ $0.file == nil || $0.file === self }) == true { open[identity] = nil }
        }
    }

    private func closeLocked() -> Bool {
        state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.closed = true
            state.mapping = nil
            state.next = nil
            state.retired.removeAll()
            state.limit = 0
            if isRegularFile {
                _ = ftruncate(descriptor, off_t(state.length))
                _ = flock(descriptor, LOCK_UN)
            }
            return true
        }
    }

    // MARK: Internals

    private static let growthQueue = DispatchQueue(label: "touchpoint.files.growth")

    /// The logs open in this process, by file.
    private static let openFiles = Locked<[FileIdentity: WeakFile]>([:])

    private struct FileIdentity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private struct WeakFile {
        weak var file: MappedLogFile?
    }

    private static func copy(_ source: UnsafeRawPointer, _ count: Int, to mapping: Mapping, at offset: Int64) {
        let target = mapping.base + Int(offset - mapping.offset)
        // The terminator goes in last, so a record cut by a kill mid-copy has none and is cut
        // when the file is reopened.
        target.copyMemory(from: source, byteCount: count - 1)
        let last = source.load(fromByteOffset: count - 1, as: UInt8.self)
        target.storeBytes(of: last, toByteOffset: count - 1, as: UInt8.self)
    }

    /// Rotates to the segment that holds the record, or writes it with `pwrite`.
    private func appendSlowly(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        let count = bytes.count
        defer {
            if state.withLock({ !$0.retired.isEmpty }) { releaseRetiredSegments() }
            requestGrowthWhenLow()
        }
        // First without the growth lock: the usual case is a rotation, or space the growth queue
        // has allocated since the last look.
        let mapped: Result<Bool, FileError> = state.withLock { state in
            guard !state.closed else { return .failure(FileError(operation: "write", path: path, code: EBADF)) }
            return .success(copyIfAllocated(bytes, &state))
        }
        if try mapped.get() { return }
        // No allocated space (the queue is behind, or the disk is full) or no mapping: write.
        // The growth lock keeps the queue's zeros out of the range being written.
        let written: Result<Bool, FileError> = growth.withLock { _ in
            let start = state.withLock { state -> Result<Int64?, FileError> in
                guard !state.closed else { return .failure(FileError(operation: "write", path: path, code: EBADF)) }
                return .success(copyIfAllocated(bytes, &state) ? nil : state.length)
            }
            guard case .success(let offset?) = start else { return start.map { _ in true } }
            do throws(FileError) {
                if isRegularFile {
                    try AtomicFile.transferAll(count, "write", path) { done in
                        pwrite(descriptor, bytes.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                    }
                } else {
                    try AtomicFile.writeAll(descriptor, bytes, path: path)
                }
            } catch {
                return .failure(error)
            }
            state.withLock { state in
                state.length = offset + Int64(count)
                state.allocated = max(state.allocated, state.length)
                state.limit = min(state.allocated, state.mapping?.end ?? 0)
                state.statistics.writtenAppends += 1
            }
            return .success(false)
        }
        _ = try written.get()
    }

    /// Copies a record into the mapping when allocated space holds it, mapping the segment that
    /// holds it first when needed. False when it must be written instead.
    private func copyIfAllocated(_ bytes: UnsafeRawBufferPointer, _ state: inout State) -> Bool {
        let count = bytes.count
        let end = state.length + Int64(count)
        guard options.mapsFile, isRegularFile, state.allocated >= end, count <= segmentBytes - Self.pageSize else {
            return false
        }
        if state.mapping == nil || state.mapping!.end < end {
            let rotating = state.mapping != nil
            if let old = state.mapping { state.retired.append(old) }
            state.mapping = nil
            if let next = state.next, next.offset <= state.length, end <= next.end {
                state.mapping = next
                state.next = nil
                state.unpopulated = state.nextUnpopulated
                state.statistics.preparedRotations += 1
            } else {
                // The queue is behind, or the record is longer than the overlap: map it here.
                if let next = state.next { state.retired.append(next) }
                state.next = nil
                guard let mapping = map(at: state.length) else { return false }
                state.mapping = mapping
                state.unpopulated = min(state.unpopulated, state.length)
            }
            if rotating { state.statistics.rotations += 1 }
        }
        guard let mapping = state.mapping else { return false }
        state.limit = min(state.allocated, mapping.end)
        Self.copy(bytes.baseAddress!, count, to: mapping, at: state.length)
        state.length = end
        state.statistics.mappedAppends += 1
        return true
    }

    /// Lets go of the segments rotations retired, on the growth queue: unmapping a segment full
    /// of written pages takes a while, and the queue holds the last reference, so the appender
    /// never does it.
    private func releaseRetiredSegments() {
        Self.growthQueue.async {
            let retired = self.state.withLock { state -> [Mapping] in
                defer { state.retired.removeAll() }
                return state.retired
            }
            withExtendedLifetime(retired) {}
        }
    }

    /// Maps the segment that holds `offset`; nil when the system refuses (the log is then written).
    private func map(at offset: Int64) -> Mapping? {
        let start = offset / Int64(Self.pageSize) * Int64(Self.pageSize)
        guard let base = mmap(nil, segmentBytes, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, off_t(start)),
            base != UnsafeMutableRawPointer(bitPattern: -1)  // MAP_FAILED
        else { return nil }
        return Mapping(base: base, offset: start, size: segmentBytes)
    }

    /// Asks for the next step of growth when less than half a step of allocated space is left.
    private func requestGrowthWhenLow() {
        guard options.mapsFile, isRegularFile else { return }
        let schedule = state.withLock { state -> Bool in
            guard !state.growing, !state.closed, state.allocated - state.length < growthBytes / 2 else { return false }
            state.growing = true
            return true
        }
        if schedule { scheduleGrowth() }
    }

    private func requestGrowth() {
        guard options.mapsFile, isRegularFile else { return }
        let schedule = state.withLock { state -> Bool in
            guard !state.growing, !state.closed else { return false }
            state.growing = true
            return true
        }
        if schedule { scheduleGrowth() }
    }

    private func scheduleGrowth() {
        Self.growthQueue.async { self.grow() }
    }

    /// Allocates space for at least `bytes` more of records now, on the calling thread, instead
    /// of waiting for the growth queue: before a burst of appends that must all be copies.
    /// - Throws: ``FileError`` (``FileError/isOutOfSpace`` when the disk is full).
    public func reserve(_ bytes: Int) throws(FileError) {
        guard options.mapsFile, isRegularFile else { return }
        try grow(atLeast: Int64(bytes), clearsRequest: false, populates: true).get()
    }

    /// Allocates the next step of the file and faults its pages in, on the growth queue.
    private func grow() {
        _ = grow(atLeast: 0, clearsRequest: true, populates: true)
    }

    private func grow(atLeast bytes: Int64, clearsRequest: Bool, populates: Bool) -> Result<Void, FileError> {
        growth.withLock { _ in
            let (from, length, closed) = state.withLock { ($0.allocated, $0.length, $0.closed) }
            guard !closed else {
                if clearsRequest { state.withLock { $0.growing = false } }
                return .failure(FileError(operation: "allocate", path: path, code: EBADF))
            }
            let page = Int64(Self.pageSize)
            let to = max(from + growthBytes, (length + bytes + page - 1) / page * page)
            let allocated = Self.allocate(descriptor, from: from, to: to, path: path)
            let (mapping, unpopulated) = state.withLock { state in
                if clearsRequest { state.growing = false }
                switch allocated {
                case .success:
                    state.allocated = max(state.allocated, to)
                    if let mapping = state.mapping { state.limit = min(state.allocated, mapping.end) }
                case .failure:
                    state.statistics.growthFailures += 1
                }
                defer { if populates { state.unpopulated = max(state.unpopulated, state.allocated) } }
                return (state.mapping, (state.unpopulated, state.allocated))
            }
            #if os(Linux) || os(Android)
            if populates, let mapping { Self.populate(mapping, from: unpopulated.0, to: unpopulated.1) }
            #else
            _ = (mapping, unpopulated)
            #endif
            if populates { prepareNextSegment() }
            return allocated
        }
    }

    /// Maps the segment after the current one once the allocated space reaches into it, and
    /// faults in its allocated pages, so that the rotation into it costs the appender no system
    /// call and no page fault. Runs under the growth lock.
    private func prepareNextSegment() {
        let page = Int64(Self.pageSize)
        let overlap = max(page, Int64(segmentBytes) / 2 / page * page)
        let wanted = state.withLock { state -> (current: Mapping, start: Int64)? in
            guard !state.closed, state.next == nil, let mapping = state.mapping,
                state.allocated > mapping.end - overlap
            else { return nil }
            return (mapping, mapping.end - overlap)
        }
        if let wanted, let next = map(at: wanted.start) {
            // Dropped here, on the growth queue, when the appender has rotated meanwhile.
            state.withLock { state in
                guard !state.closed, state.next == nil, state.mapping === wanted.current else { return }
                state.next = next
                state.nextUnpopulated = next.offset
            }
        }
        #if os(Linux) || os(Android)
        let range = state.withLock { state -> (next: Mapping, from: Int64, to: Int64)? in
            guard let next = state.next, state.nextUnpopulated < state.allocated else { return nil }
            defer { state.nextUnpopulated = state.allocated }
            return (next, state.nextUnpopulated, state.allocated)
        }
        if let range { Self.populate(range.next, from: range.from, to: range.to) }
        #endif
    }

    /// Makes the file system allocate `[from, to)`, extending the file.
    private static func allocate(_ descriptor: Int32, from: Int64, to: Int64, path: String) -> Result<Void, FileError> {
        #if canImport(Glibc) || canImport(Musl) || canImport(Android)
        let status = posix_fallocate(descriptor, off_t(from), off_t(to - from))
        if status == 0 { return .success(()) }
        guard status == EOPNOTSUPP || status == EINVAL else {
            return .failure(FileError(operation: "posix_fallocate", path: path, code: status))
        }
        #endif
        // No allocation call for this file system: writing zeros allocates as surely.
        let zeros = [UInt8](repeating: 0, count: Int(min(to - from, 64 * 1024)))
        var offset = from
        while offset < to {
            let count = Int(min(Int64(zeros.count), to - offset))
            let written = zeros.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, count, off_t(offset)) }
            if written < 0 {
                if errno == EINTR { continue }
                return .failure(FileError.current("pwrite", path))
            }
            offset += Int64(written)
        }
        return .success(())
    }

    #if os(Linux) || os(Android)
    /// Faults the pages of `[from, to)` in writable (`MADV_POPULATE_WRITE`, Linux 5.14 and later)
    /// without changing their content, so appends into them take no page fault.
    private static func populate(_ mapping: Mapping, from: Int64, to: Int64) {
        let page = Int64(pageSize)
        let start = max(from / page * page, mapping.offset)
        let end = min(to, mapping.end)
        guard end > start else { return }
        _ = madvise(mapping.base + Int(start - mapping.offset), Int(end - start), 23 /* MADV_POPULATE_WRITE */)
    }
    #endif
}
