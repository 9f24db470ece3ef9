#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The few POSIX socket calls the test server needs, with the platform differences hidden.
enum Socket {
    /// A failure to set up a listening socket.
    struct SetupError: Error, CustomStringConvertible {
        let operation: String
        let code: Int32
        var description: String {
            let reason = strerror(code).map { String(cString: $0) } ?? "unknown error"
            return "\(operation): \(reason) (errno \(code))"
        }
    }

    #if canImport(Darwin)
    private static let streamType = SOCK_STREAM
    private static let sendFlags: Int32 = 0
    #else
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let sendFlags = Int32(MSG_NOSIGNAL)
    #endif

    /// A TCP socket listening on 127.0.0.1:`port` (0 for an ephemeral port), and the port it got.
    static func listen(port: UInt16, backlog: Int32 = 128) throws(SetupError) -> (descriptor: Int32, port: UInt16) {
        try bound(port: port, listening: backlog)
    }

    /// A TCP socket bound to 127.0.0.1:`port` (0 for an ephemeral port) that does not listen: it
    /// holds the port (the system does not hand it to another socket asking for a free port) while
    /// connections to it are refused.
    static func reserve(port: UInt16) throws(SetupError) -> (descriptor: Int32, port: UInt16) {
        try bound(port: port, listening: nil)
    }

    private static func bound(port: UInt16, listening backlog: Int32?) throws(SetupError) -> (
        descriptor: Int32, port: UInt16
    ) {
        let descriptor = socket(AF_INET, streamType, 0)
        guard descriptor >= 0 else { throw SetupError(operation: "socket", code: errno) }
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setCloseOnExec(descriptor)
        var address = loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            Socket.close(descriptor)
            throw SetupError(operation: "bind 127.0.0.1:\(port)", code: code)
        }
        if let backlog {
            guard systemListen(descriptor, backlog) == 0 else {
                let code = errno
                Socket.close(descriptor)
                throw SetupError(operation: "listen", code: code)
            }
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else {
            let code = errno
            Socket.close(descriptor)
            throw SetupError(operation: "getsockname", code: code)
        }
        return (descriptor, UInt16(bigEndian: actual.sin_port))
    }

    /// A connected TCP socket to 127.0.0.1:`port`, or nil when the connection is refused.
    static func connect(port: UInt16) -> Int32? {
        let descriptor = socket(AF_INET, streamType, 0)
        guard descriptor >= 0 else { return nil }
        setCloseOnExec(descriptor)
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Socket.close(descriptor)
            return nil
        }
        return descriptor
    }

    /// The address 127.0.0.1:`port`.
    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        return address
    }

    /// Accepts one connection, or returns nil on failure.
    static func accept(_ descriptor: Int32) -> Int32? {
        let client = systemAccept(descriptor, nil, nil)
        guard client >= 0 else { return nil }
        setCloseOnExec(client)
        #if canImport(Darwin)
        var one: Int32 = 1
        _ = setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var noDelay: Int32 = 1
        _ = setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        return client
    }

    /// Makes blocking reads and writes on `descriptor` give up after `seconds`.
    static func setTimeouts(_ descriptor: Int32, seconds: Double) {
        let whole = Int(seconds)
        var value = timeval()
        value.tv_sec = .init(whole)
        value.tv_usec = .init((seconds - Double(whole)) * 1_000_000)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Waits until `descriptor` is readable (or closed, or in error) for at most `milliseconds`.
    /// - Returns: true when it became readable or hung up, false on timeout.
    static func waitReadable(_ descriptor: Int32, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let result = poll(&entry, 1, milliseconds)
            if result < 0 && errno == EINTR { continue }
            return result > 0
        }
    }

    /// Reads what is available into `buffer`.
    /// - Returns: the byte count; 0 at end of stream; -1 on error or timeout.
    static func receive(_ descriptor: Int32, into buffer: inout [UInt8]) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            return count
        }
    }

    /// Writes all of `bytes`; false when the peer is gone or the write timed out.
    static func sendAll(_ descriptor: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let written = bytes.withUnsafeBytes { raw in
                send(descriptor, raw.baseAddress! + (offset - bytes.startIndex), bytes.endIndex - offset, sendFlags)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            if written == 0 { return false }
            offset += written
        }
        return true
    }

    /// Makes the next `close` of `descriptor` send a TCP reset instead of a normal close.
    static func armReset(_ descriptor: Int32) {
        var lingerOption = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &lingerOption, socklen_t(MemoryLayout<linger>.size))
    }

    /// Stops all traffic on `descriptor` and wakes any thread blocked on it; the owner still closes it.
    static func shutdownBoth(_ descriptor: Int32) {
        #if canImport(Darwin)
        _ = shutdown(descriptor, SHUT_RDWR)
        #else
        _ = shutdown(descriptor, Int32(SHUT_RDWR))
        #endif
    }

    static func close(_ descriptor: Int32) {
        #if canImport(Darwin)
        _ = Darwin.close(descriptor)
        #elseif canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Musl.close(descriptor)
        #endif
    }

    private static func setCloseOnExec(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }
}

// `listen`, `connect` and `accept` are shadowed by the static methods above; these names mean the syscalls.
@inline(__always)
private func systemListen(_ descriptor: Int32, _ backlog: Int32) -> Int32 {
    listen(descriptor, backlog)
}

@inline(__always)
private func systemConnect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(descriptor, address, length)
}

@inline(__always)
private func systemAccept(
    _ descriptor: Int32,
    _ address: UnsafeMutablePointer<sockaddr>?,
    _ length: UnsafeMutablePointer<socklen_t>?
) -> Int32 {
    accept(descriptor, address, length)
}
