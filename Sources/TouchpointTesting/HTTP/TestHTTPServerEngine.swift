import Foundation
import TouchpointCore

/// The working part of ``TestHTTPServer``: the listener, the accept thread and one thread per
/// connection. Threads hold the engine, not the server, so releasing the server stops it.
final class TestHTTPServerEngine: Sendable {
    struct State {
        var handler: TestHTTPServer.Handler
        var scripted: [TestHTTPResponse] = []
        var log: [TestHTTPRequest] = []
        var sequence = 0
        var connectionCounter = 0
        var isRunning = false
        var generation = 0
        var listener: Int32?
        /// While stopped: a socket bound to the port without listening, so connections are refused
        /// and no other server (of a test running alongside) is given the port before a restart.
        var reservation: Int32?
        var acceptFinished: DispatchSemaphore?
        /// Open connections by number; a descriptor is closed only under the lock, so `stop`
        /// never shuts down a descriptor number that was reused.
        var connections: [Int: Int32] = [:]
    }

    /// What to do with a connection after answering one request.
    private enum Next {
        case keepAlive
        case close
        case reset
    }

    let state: Locked<State>
    let options: TestHTTPServer.Options
    private(set) var port: UInt16 {
        get { portStorage.value }
        set { portStorage.withLock { $0 = newValue } }
    }
    private let portStorage = Locked<UInt16>(0)

    init(port: UInt16, options: TestHTTPServer.Options, handler: @escaping TestHTTPServer.Handler) throws {
        self.options = options
        state = Locked(State(handler: handler))
        self.port = port
        try start()
    }

    func start() throws {
        try state.withLock { state in
            guard !state.isRunning else { return }
            if let reservation = state.reservation {
                Socket.close(reservation)
                state.reservation = nil
            }
            let (listener, boundPort) = try Socket.listen(port: port)
            if port == 0 { portStorage.withLock { $0 = boundPort } }
            state.isRunning = true
            state.generation += 1
            state.listener = listener
            let finished = DispatchSemaphore(value: 0)
            state.acceptFinished = finished
            let generation = state.generation
            let thread = Thread { [self] in acceptLoop(listener: listener, generation: generation, finished: finished) }
            thread.name = "TestHTTPServer.accept"
            thread.start()
        }
    }

    func stop() {
        let taken: (listener: Int32, finished: DispatchSemaphore?)? = state.withLock { state in
            guard state.isRunning, let listener = state.listener else { return nil }
            state.isRunning = false
            state.generation += 1
            state.listener = nil
            for descriptor in state.connections.values { Socket.shutdownBoth(descriptor) }
            return (listener, state.acceptFinished)
        }
        guard let taken else { return }
        // Wakes the accept thread at once and, on Linux, refuses new connections immediately.
        Socket.shutdownBoth(taken.listener)
        _ = taken.finished?.wait(timeout: .now() + 2)
        // The accept thread has closed the listener: hold the port until a restart or the end.
        state.withLock { state in
            guard !state.isRunning, state.reservation == nil else { return }
            state.reservation = try? Socket.reserve(port: port).descriptor
        }
    }

    deinit {
        if let reservation = state.value.reservation { Socket.close(reservation) }
    }

    private func acceptLoop(listener: Int32, generation: Int, finished: DispatchSemaphore) {
        defer {
            Socket.close(listener)
            finished.signal()
        }
        while state.withLock({ $0.isRunning && $0.generation == generation }) {
            guard Socket.waitReadable(listener, milliseconds: 100), let client = Socket.accept(listener) else {
                continue
            }
            let number: Int? = state.withLock { state in
                guard state.isRunning && state.generation == generation else { return nil }
                state.connectionCounter += 1
                state.connections[state.connectionCounter] = client
                return state.connectionCounter
            }
            guard let number else {
                Socket.close(client)
                return
            }
            let thread = Thread { [self] in serve(client, number: number) }
            thread.name = "TestHTTPServer.connection-\(number)"
            thread.start()
        }
    }

    private func serve(_ descriptor: Int32, number: Int) {
        Socket.setTimeouts(descriptor, seconds: options.ioTimeout)
        var parser = HTTPRequestParser(
            maximumHeadBytes: options.maximumHeadBytes,
            maximumBodyBytes: options.maximumBodyBytes
        )
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var sentContinue = false
        var next = Next.close
        reading: while true {
            let parsed: HTTPRequestParser.Parsed?
            do {
                parsed = try parser.next()
            } catch {
                let response = TestHTTPResponse.text(error.reason + "\n", status: error.status)
                _ = Socket.sendAll(descriptor, response.serialized(includeBody: true, close: true)[...])
                next = .close
                break reading
            }
            if let parsed {
                next = answer(parsed, on: descriptor, connection: number)
                guard case .keepAlive = next else { break reading }
                sentContinue = false
                continue
            }
            if parser.isAwaitingContinue && !sentContinue {
                sentContinue = true
                guard Socket.sendAll(descriptor, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)[...]) else { break }
            }
            let count = Socket.receive(descriptor, into: &buffer)
            guard count > 0 else { break }
            parser.append(buffer[0..<count])
        }
        state.withLock { state in
            state.connections.removeValue(forKey: number)
            if case .reset = next { Socket.armReset(descriptor) }
            Socket.close(descriptor)
        }
    }

    /// Logs `parsed`, gets its response and sends it (or misbehaves as told).
    private func answer(_ parsed: HTTPRequestParser.Parsed, on descriptor: Int32, connection: Int) -> Next {
        let (request, scripted, handler) = state.withLock { state in
            let request = TestHTTPRequest(
                method: TransportMethod(rawValue: parsed.method),
                target: parsed.target,
                version: parsed.version,
                headers: parsed.headers,
                body: parsed.body,
                connection: connection,
                sequence: state.sequence
            )
            state.sequence += 1
            state.log.append(request)
            let scripted = state.scripted.isEmpty ? nil : state.scripted.removeFirst()
            return (request, scripted, state.handler)
        }
        let response = scripted ?? call(handler, with: request)
        let connectionHeader = request.headers["Connection"]?.lowercased() ?? ""
        let clientCloses =
            connectionHeader.contains("close")
            || (request.version == "HTTP/1.0" && !connectionHeader.contains("keep-alive"))
        let closes = clientCloses || response.closesConnection || !state.withLock({ $0.isRunning })
        switch response.fault {
        case .reset:
            return .reset
        case .stall(let seconds):
            stall(descriptor, seconds: seconds)
            return .close
        case .closeMidResponse:
            let bytes = response.serialized(includeBody: request.method != .head, close: closes)
            _ = Socket.sendAll(descriptor, bytes[0..<max(1, bytes.count / 2)])
            return .close
        case nil:
            let bytes = response.serialized(includeBody: request.method != .head, close: closes)
            guard Socket.sendAll(descriptor, bytes[...]) else { return .close }
            return closes ? .close : .keepAlive
        }
    }

    /// Runs the async handler from this connection thread, within the handler deadline. Where
    /// task executors exist, the handler's jobs run on this thread (see ``ConnectionExecutor``).
    private func call(_ handler: @escaping TestHTTPServer.Handler, with request: TestHTTPRequest) -> TestHTTPResponse {
        let result = Locked<TestHTTPResponse?>(nil)
        let deadline = DispatchTime.now() + options.handlerTimeout
        var answered = false
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            let executor = ConnectionExecutor()
            Task(executorPreference: executor) {
                let response = await handler(request)
                result.withLock { $0 = response }
                executor.wake()
            }
            answered = executor.run(until: { result.value != nil }, deadline: deadline)
        } else {
            let done = DispatchSemaphore(value: 0)
            Task {
                let response = await handler(request)
                result.withLock { $0 = response }
                done.signal()
            }
            answered = done.wait(timeout: deadline) == .success
        }
        guard answered, let response = result.value else {
            return .text("the test handler did not answer within \(options.handlerTimeout) s\n", status: 500)
        }
        return response
    }

    /// Sends nothing for `seconds`, returning early when the peer closes or the server stops.
    private func stall(_ descriptor: Int32, seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        var scratch = [UInt8](repeating: 0, count: 4096)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return }
            if Socket.waitReadable(descriptor, milliseconds: Int32(min(remaining, 0.1) * 1000) + 1) {
                // Data or end of stream: anything but more request bytes means the peer gave up.
                if Socket.receive(descriptor, into: &scratch) <= 0 { return }
            }
        }
    }
}
