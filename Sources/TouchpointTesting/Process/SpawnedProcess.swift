import Foundation
import TouchpointCore

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A child process for a test, started with `posix_spawn`: standard input, output and error from
/// and to files, `/dev/null`, or (output) captured by a thread of its own; every other descriptor
/// closed in the child; its exit awaited on a thread of its own.
///
/// Not Foundation's `Process`: on Linux, the `run()` of Swift 6.3.1's Foundation copies the whole
/// 256-byte name of each `/proc/self/fd` entry, reading past the end of glibc's buffer, and now
/// and then crashes the test process (a CI run of this package did; fixed in
/// swift-corelibs-foundation after 6.3.1).
///
/// ```swift
/// let child = try SpawnedProcess(ChildProcess.builtProduct("touchpoint"), ["events", "tail"], output: .capture)
/// let end = await child.exit()
/// #expect(end == .exited(0))
/// ```
public final class SpawnedProcess: Sendable {
    /// Where a standard stream goes.
    ///
    /// A child given the test process's own output keeps the test runner's pipe open: if the test
    /// process crashes, the runner then waits for that child instead of reporting the crash.
    public enum Stream: Sendable {
        /// The test process's own (see above).
        case inherit
        /// `/dev/null`.
        case null
        /// A file, created or truncated (output) or read (input).
        case file(String)
        /// A pipe read to its end by a thread of its own (output only): ``output`` and ``errors``.
        case capture
    }

    /// How the child ended.
    public enum Termination: Sendable, Hashable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)

        /// The exit status, or the signal's number.
        public var status: Int32 {
            switch self {
            case .exited(let status), .signaled(let status): status
            }
        }
    }

    /// Why a child could not be started.
    public struct LaunchError: Error, CustomStringConvertible {
        /// What was wrong.
        public let description: String
    }

    private struct State {
        var termination: Termination?
        var exitWaiters: [@Sendable (Termination) -> Void] = []
        var openCaptures = 0
        var captureWaiters: [@Sendable () -> Void] = []
    }

    /// The child's process id.
    public let processIdentifier: pid_t
    private let state = Locked(State())
    private let captured = Locked(([UInt8](), [UInt8]()))

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - environment: the child's whole environment (the test process's when nil).
    ///   - input: its standard input, `/dev/null` unless given.
    ///   - output: its standard output, likewise.
    ///   - errors: its standard error, likewise.
    /// - Throws: ``LaunchError`` when a pipe cannot be made or the program cannot be started.
    public init(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, input: Stream = .null,
        output: Stream = .null, errors: Stream = .null
    ) throws {
        #if !canImport(Darwin)
        let closeFrom = try Self.closeFrom()
        #endif
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Signals as a new program expects them: none blocked, none ignored (a test process
        // ignores SIGPIPE, and an ignored signal stays ignored across exec).
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigfillset(&signals)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        #if canImport(Darwin)
        // Every descriptor but the three closed in the child.
        let closeEveryOther = POSIX_SPAWN_CLOEXEC_DEFAULT
        #else
        let closeEveryOther: Int32 = 0
        #endif
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | closeEveryOther))

        var readEnds: [(descriptor: Int32, isErrors: Bool)] = []
        var writeEnds: [Int32] = []
        defer { for descriptor in writeEnds { close(descriptor) } }
        func cleanUp() { for end in readEnds { close(end.descriptor) } }
        for (descriptor, stream) in [(Int32(0), input), (1, output), (2, errors)] {
            switch stream {
            case .inherit:
                break
            case .null:
                posix_spawn_file_actions_addopen(
                    &actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                let flags = descriptor == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC
                posix_spawn_file_actions_addopen(&actions, descriptor, path, flags, 0o644)
            case .capture:
                guard descriptor > 0 else {
                    cleanUp()
                    throw LaunchError(description: "standard input cannot be captured")
                }
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else {
                    cleanUp()
                    throw LaunchError(description: "pipe: errno \(errno)")
                }
                // Close-on-exec, so that no other child started meanwhile keeps them.
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                readEnds.append((ends[0], descriptor == 2))
                writeEnds.append(ends[1])
                posix_spawn_file_actions_adddup2(&actions, ends[1], descriptor)
            }
        }
        #if canImport(Darwin)
        let closed: Int32 = 0
        #else
        let closed = closeFrom(&actions, 3)
        #endif
        let environment = environment ?? ProcessInfo.processInfo.environment
        var argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        var envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let status = closed == 0 ? posix_spawn(&pid, executable.path, &actions, &attributes, &argv, &envp) : closed
        guard status == 0 else {
            cleanUp()
            throw LaunchError(description: "cannot start \(executable.path): \(String(cString: strerror(status)))")
        }
        processIdentifier = pid
        state.withLock { $0.openCaptures = readEnds.count }
        for end in readEnds { startReading(end.descriptor, isErrors: end.isErrors) }
        let process = pid
        Thread { [state] in
            var status: Int32 = 0
            while waitpid(process, &status, 0) < 0 && errno == EINTR {}
            let termination: Termination =
                status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
            let waiters = state.withLock { state in
                state.termination = termination
                defer { state.exitWaiters.removeAll() }
                return state.exitWaiters
            }
            for waiter in waiters { waiter(termination) }
        }.start()
    }

    private func startReading(_ descriptor: Int32, isErrors: Bool) {
        Thread { [state, captured] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                captured.withLock {
                    if isErrors {
                        $0.1.append(contentsOf: buffer[..<count])
                    } else {
                        $0.0.append(contentsOf: buffer[..<count])
                    }
                }
            }
            close(descriptor)
            let waiters = state.withLock { state -> [@Sendable () -> Void] in
                state.openCaptures -= 1
                guard state.openCaptures == 0 else { return [] }
                defer { state.captureWaiters.removeAll() }
                return state.captureWaiters
            }
            for waiter in waiters { waiter() }
        }.start()
    }

    /// Whether the child has not exited yet (or has not been waited for by its thread).
    public var isRunning: Bool { state.withLock { $0.termination == nil } }

    /// How the child ended, once it has.
    public var termination: Termination? { state.withLock { $0.termination } }

    /// What the child wrote to a captured standard output so far.
    public var output: [UInt8] { captured.withLock { $0.0 } }

    /// What the child wrote to a captured standard error so far.
    public var errors: [UInt8] { captured.withLock { $0.1 } }

    /// Sends `signal` to the child (nothing once it has exited).
    public func send(_ signal: Int32) {
        state.withLock { state in
            if state.termination == nil { _ = kill(processIdentifier, signal) }
        }
    }

    /// Suspends until the child exits.
    public func exit() async -> Termination {
        await withCheckedContinuation { continuation in
            whenExited { continuation.resume(returning: $0) }
        }
    }

    /// Suspends until the child exits or `seconds` pass, whichever comes first.
    /// - Returns: how it ended, or nil when time ran out.
    public func exit(within seconds: Double) async -> Termination? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Termination?, Never>) in
            let pending = Locked<CheckedContinuation<Termination?, Never>?>(continuation)
            let resume: @Sendable (Termination?) -> Void = { value in
                pending.withLock { waiting in
                    defer { waiting = nil }
                    return waiting
                }?.resume(returning: value)
            }
            let deadline = Task {
                // Cancelled: the exit came first, and resumed.
                guard (try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))) != nil else {
                    return
                }
                resume(nil)
            }
            whenExited { termination in
                resume(termination)
                deadline.cancel()
            }
        }
    }

    /// Blocks until the child exits: for synchronous code on a thread that may block.
    public func waitUntilExit() -> Termination {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<Termination?>(nil)
        whenExited { termination in
            result.withLock { $0 = termination }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? .signaled(0)
    }

    /// Suspends until the captured streams reach their end (the child and whatever inherited them
    /// closed them): then ``output`` and ``errors`` hold everything.
    public func capturesEnded() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = state.withLock { state -> Bool in
                guard state.openCaptures > 0 else { return true }
                state.captureWaiters.append { continuation.resume() }
                return false
            }
            if ended { continuation.resume() }
        }
    }

    private func whenExited(_ body: @escaping @Sendable (Termination) -> Void) {
        let ended = state.withLock { state -> Termination? in
            if let termination = state.termination { return termination }
            state.exitWaiters.append(body)
            return nil
        }
        if let ended { body(ended) }
    }

    #if !canImport(Darwin)
    /// `posix_spawn_file_actions_addclosefrom_np`, which closes every descriptor from a number up
    /// in the child (glibc 2.34 and later; Swift's Glibc module does not import it). Without it a
    /// child inherits what the test process has open without close-on-exec when it starts, such
    /// as the write end of another test's pipe, whose reader then waits for that child too.
    public typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// Looks up ``CloseFrom``.
    /// - Throws: ``LaunchError`` when the C library has none.
    public static func closeFrom() throws -> CloseFrom {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
            throw LaunchError(
                description: "the C library has no posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later)")
        }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }
    #endif
}
