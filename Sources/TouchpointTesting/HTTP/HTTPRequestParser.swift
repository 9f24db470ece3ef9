import Foundation
import TouchpointCore

/// An incremental HTTP/1.1 request parser: feed it bytes as they arrive, take requests out.
///
/// It reads the request line, header fields, and a body framed by `Content-Length` or by
/// `Transfer-Encoding: chunked` (trailers are read and dropped). Pipelined requests stay
/// buffered for the next call. Anything malformed or over a limit is a ``Failure`` carrying the
/// status the server should answer with.
struct HTTPRequestParser {
    /// A request head and body, before the server adds its bookkeeping.
    struct Parsed: Equatable {
        var method: String
        var target: String
        var version: String
        var headers: TransportHeaders
        var body: [UInt8]
    }

    /// Why the bytes are not an acceptable request.
    struct Failure: Error, Equatable {
        var status: Int
        var reason: String
    }

    private enum Stage {
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
    }

    let maximumHeadBytes: Int
    let maximumBodyBytes: Int
    private var buffer: [UInt8] = []
    private var position = 0
    private var stage = Stage.head
    private var current: Parsed?

    init(maximumHeadBytes: Int = 64 * 1024, maximumBodyBytes: Int = 64 << 20) {
        self.maximumHeadBytes = maximumHeadBytes
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// Whether a request head asked for `100 Continue` and its body has not started.
    var isAwaitingContinue: Bool {
        guard let current, current.body.isEmpty else { return false }
        switch stage {
        case .fixedBody, .chunkSize:
            return current.headers["Expect"]?.lowercased() == "100-continue" && position == buffer.count
        default:
            return false
        }
    }

    /// Whether no partial request is buffered (the connection is idle between requests).
    var isIdle: Bool { current == nil && position == buffer.count }

    /// Adds received bytes.
    mutating func append(_ bytes: ArraySlice<UInt8>) {
        if position > 0 && position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
        } else if position > 64 * 1024 {
            buffer.removeFirst(position)
            position = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete request, nil when more bytes are needed.
    mutating func next() throws(Failure) -> Parsed? {
        while true {
            switch stage {
            case .head:
                guard let end = find(crlfcrlf, from: position) else {
                    if buffer.count - position > maximumHeadBytes {
                        throw Failure(status: 431, reason: "request head over \(maximumHeadBytes) bytes")
                    }
                    return nil
                }
                let head = try parseHead(buffer[position..<end])
                position = end + 4
                current = head
                stage = try bodyStage(for: head.headers)
            case .fixedBody(let remaining):
                let left = takeBody(remaining)
                guard left == 0 else {
                    stage = .fixedBody(remaining: left)
                    return nil
                }
                return finish()
            case .chunkSize:
                guard let end = find(crlf, from: position) else {
                    if buffer.count - position > 1024 { throw Failure(status: 400, reason: "chunk size line too long") }
                    return nil
                }
                let line = String(decoding: buffer[position..<end], as: UTF8.self)
                position = end + 2
                let digits =
                    line.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
                guard !digits.isEmpty, digits.count <= 15, let size = Int(digits, radix: 16), size >= 0 else {
                    throw Failure(status: 400, reason: "invalid chunk size \"\(line)\"")
                }
                guard current!.body.count + size <= maximumBodyBytes else {
                    throw Failure(status: 413, reason: "request body over \(maximumBodyBytes) bytes")
                }
                stage = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                let left = takeBody(remaining)
                guard left == 0 else {
                    stage = .chunkData(remaining: left)
                    return nil
                }
                stage = .chunkDataEnd
            case .chunkDataEnd:
                guard buffer.count - position >= 2 else { return nil }
                guard buffer[position] == 13 && buffer[position + 1] == 10 else {
                    throw Failure(status: 400, reason: "chunk data not followed by CRLF")
                }
                position += 2
                stage = .chunkSize
            case .trailers:
                guard let end = find(crlf, from: position) else {
                    if buffer.count - position > maximumHeadBytes {
                        throw Failure(status: 431, reason: "trailers too long")
                    }
                    return nil
                }
                let isLast = end == position
                position = end + 2
                if isLast { return finish() }
            }
        }
    }

    /// Moves up to `wanted` buffered bytes into the body.
    /// - Returns: how many bytes are still wanted.
    private mutating func takeBody(_ wanted: Int) -> Int {
        let available = min(wanted, buffer.count - position)
        current!.body.append(contentsOf: buffer[position..<(position + available)])
        position += available
        return wanted - available
    }

    private mutating func finish() -> Parsed? {
        defer {
            current = nil
            stage = .head
        }
        return current
    }

    private func bodyStage(for headers: TransportHeaders) throws(Failure) -> Stage {
        if let encoding = headers["Transfer-Encoding"] {
            let codings = encoding.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard codings.last == "chunked" else {
                throw Failure(status: 501, reason: "unsupported transfer coding \"\(encoding)\"")
            }
            guard codings.count == 1 else {
                throw Failure(status: 501, reason: "unsupported transfer coding \"\(encoding)\"")
            }
            return .chunkSize
        }
        let lengths = headers.values(for: "Content-Length")
        guard let first = lengths.first else { return .fixedBody(remaining: 0) }
        guard lengths.allSatisfy({ $0 == first }), first.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), first.count <= 15,
            let length = Int(first)
        else {
            throw Failure(status: 400, reason: "invalid Content-Length \"\(lengths.joined(separator: ", "))\"")
        }
        guard length <= maximumBodyBytes else {
            throw Failure(status: 413, reason: "request body of \(length) bytes over \(maximumBodyBytes)")
        }
        return .fixedBody(remaining: length)
    }

    private func parseHead(_ bytes: ArraySlice<UInt8>) throws(Failure) -> Parsed {
        guard bytes.count <= maximumHeadBytes else {
            throw Failure(status: 431, reason: "request head over \(maximumHeadBytes) bytes")
        }
        var lines = String(decoding: bytes, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        // Tolerate blank lines before the request line (RFC 9112 §2.2).
        while lines.first?.isEmpty == true { lines.removeFirst() }
        guard let requestLine = lines.first else { throw Failure(status: 400, reason: "empty request") }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, parts[2].hasPrefix("HTTP/1.") else {
            throw Failure(status: 400, reason: "malformed request line \"\(requestLine)\"")
        }
        var headers = TransportHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw Failure(status: 400, reason: "malformed header line \"\(line)\"")
            }
            let name = line[..<colon]
            guard !name.contains(" "), !name.contains("\t") else {
                throw Failure(status: 400, reason: "malformed header name \"\(name)\"")
            }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers.add(name: String(name), value: value)
        }
        return Parsed(
            method: String(parts[0]), target: String(parts[1]), version: String(parts[2]), headers: headers, body: [])
    }

    private let crlf: [UInt8] = [13, 10]
    private let crlfcrlf: [UInt8] = [13, 10, 13, 10]

    private func find(_ pattern: [UInt8], from start: Int) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        var index = start
        let last = buffer.count - pattern.count
        while index <= last {
            if buffer[index] == pattern[0] {
                var matches = true
                for offset in 1..<pattern.count where buffer[index + offset] != pattern[offset] {
                    matches = false
                    break
                }
                if matches { return index }
            }
            index += 1
        }
        return nil
    }
}
