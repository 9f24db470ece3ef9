import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Slow, idle and too many clients against the real server over 127.0.0.1, with raw sockets:
/// each is closed (or turned away) by the connection guard instead of holding the server.
/// Each test shortens one limit and leaves the others at an hour, so the close it sees can only
/// come from that limit.
@Suite(.serialized)
struct SlowClientTests {
    static let short = Duration.milliseconds(300)
    static let hour = Duration.seconds(3600)

    static func withCollector(
        _ limits: ConnectionLimits, _ body: (RunningCollector) async throws -> Void
    ) async throws {
        try await CollectorUnderTest.run(prefix: "slow-clients", configure: { $0.connectionLimits = limits }, body)
    }

    @Test func halfARequestLineThenNothingIsClosedAtTheHeadTimeout() async throws {
        let limits = ConnectionLimits(headTimeout: Self.short, bodyTimeout: Self.hour, idleTimeout: Self.hour)
        try await Self.withCollector(limits) { collector in
            let connection = try RawConnection(port: collector.port)
            try connection.send("GET /hea")
            let answer = connection.readUntilClosed()
            #expect(answer == "", "closed without an answer")
            #expect(collector.services.metrics.connectionsTimedOut == 1)
        }
    }

    @Test func aHeadSentAByteAtATimeIsNotKeptAliveByItsBytes() async throws {
        let limits = ConnectionLimits(headTimeout: Self.short, bodyTimeout: Self.hour, idleTimeout: Self.hour)
        try await Self.withCollector(limits) { collector in
            let connection = try RawConnection(port: collector.port)
            // One byte per 50 ms of a head that never ends: 200 bytes would take 10 s.
            let head = "GET /health HTTP/1.1\r\n" + String(repeating: "X-Slow: 1\r\n", count: 20)
            var closed = false
            for character in head {
                do {
                    try connection.send(String(character))
                } catch {
                    closed = true
                    break
                }
                if let chunk = connection.read(waiting: .milliseconds(50)), chunk.isEmpty {
                    closed = true
                    break
                }
            }
            #expect(closed, "the server waited for the whole drip")
        }
    }

    @Test func aBodyThatStopsArrivingIsClosedAtTheBodyTimeout() async throws {
        let limits = ConnectionLimits(headTimeout: Self.hour, bodyTimeout: Self.short, idleTimeout: Self.hour)
        try await Self.withCollector(limits) { collector in
            let connection = try RawConnection(port: collector.port)
            let authorization = "Basic " + Data("\(collector.writeKey):".utf8).base64EncodedString()
            try connection.send(
                "POST /v1/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: \(authorization)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"batch\":[")
            let answer = connection.readUntilClosed()
            #expect(answer?.contains("200 OK") == false, "\(answer ?? "not closed")")
            #expect(answer != nil, "not closed")
            #expect(collector.services.metrics.connectionsTimedOut == 1)
        }
    }

    @Test func anIdleKeepAliveConnectionIsClosedAfterItsAnswer() async throws {
        let limits = ConnectionLimits(headTimeout: Self.hour, bodyTimeout: Self.hour, idleTimeout: Self.short)
        try await Self.withCollector(limits) { collector in
            let connection = try RawConnection(port: collector.port)
            try connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 200, "\(response.head)")
            // A second request on the same connection is answered too: the idle clock restarts.
            try connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let second = try connection.readResponse()
            #expect(second.status == 200, "\(second.head)")
            #expect(connection.readUntilClosed() == "")
            #expect(collector.services.metrics.connectionsTimedOut == 1)
        }
    }

    @Test func beyondTheConnectionLimitANewConnectionIsToldToComeBack() async throws {
        let limits = ConnectionLimits(
            headTimeout: Self.hour, bodyTimeout: Self.hour, idleTimeout: Self.hour, maximumConnections: 2)
        try await Self.withCollector(limits) { collector in
            var held = [try RawConnection(port: collector.port), try RawConnection(port: collector.port)]
            // The server counts a connection once it has accepted it: ask on each that it has.
            for connection in held {
                try connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                #expect(try connection.readResponse().status == 200)
            }
            let third = try RawConnection(port: collector.port)
            let refusal = try #require(third.readUntilClosed())
            #expect(refusal.hasPrefix("HTTP/1.1 503"), "\(refusal)")
            #expect(refusal.contains("Retry-After: 1"))
            #expect(refusal.contains("too many open connections (the limit is 2)"))
            #expect(collector.services.metrics.connectionsRefused == 1)
            #expect(collector.services.metrics.prometheusText().contains("touchpoint_connections_refused_total 1"))

            // A place freed is a place taken again (the server notices the close on its own loop).
            held.removeFirst()
            var answered = false
            for _ in 0..<50 where !answered {
                let next = try RawConnection(port: collector.port)
                try next.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                answered = (try? next.readResponse())?.status == 200
            }
            #expect(answered)
            #expect(held.count == 1)
        }
    }

    @Test func limitsThatAreNotPositiveAreRefusedAtStart() async throws {
        let directory = try TemporaryDirectory(prefix: "slow-clients-bad")
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.url)
        configuration.logger.logLevel = .warning
        configuration.connectionLimits.bodyTimeout = .zero
        await #expect {
            _ = try await CollectorServer(configuration: configuration).start()
        } throws: { error in
            (error as? CollectorError)?.message == "the body timeout must be longer than zero (it is 0.0 seconds)"
        }
        configuration.connectionLimits = ConnectionLimits(maximumConnections: 0)
        await #expect {
            _ = try await CollectorServer(configuration: configuration).start()
        } throws: { error in
            (error as? CollectorError)?.message == "the connection limit must be at least 1 (it is 0)"
        }
    }
}
