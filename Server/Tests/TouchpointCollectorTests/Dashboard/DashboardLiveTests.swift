import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// The live tail over a real socket: a stored event reaches an open event stream, and shutting
/// the collector down ends the stream instead of waiting for it.
struct DashboardLiveTests {
    /// Signs in over HTTP and returns the `Cookie` header value.
    static func signIn(_ client: LiveClient, adminToken: String) async throws -> String {
        let response = try await client.send(
            method: "POST", path: "/dashboard/sign-in",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("token=\(adminToken)&next=%2Fdashboard".utf8))
        guard response.status == 303, let cookie = response.headers["set-cookie"]?.split(separator: ";").first else {
            throw TestFailure("sign-in: HTTP \(response.status) \(response.text)")
        }
        return String(cookie)
    }

    @Test func storedEventsReachTheStreamAndShutdownEndsIt() async throws {
        let directory = try TemporaryDirectory(prefix: "dashboard-live")
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.url)
        configuration.logger.logLevel = .warning
        let collector = try await CollectorServer(configuration: configuration).start()
        var stopped = false
        defer { if !stopped { Task { [collector] in try? await collector.shutdown() } } }
        let client = LiveClient(port: collector.port)
        let cookie = try await Self.signIn(client, adminToken: collector.adminToken)

        let port = collector.port
        let refused = try await onOwnThread {
            let reader = try EventStreamReader(port: port, path: "/dashboard/live/events", headers: [])
            _ = reader.read(until: "\r\n\r\n", seconds: 30)
            return reader.received
        }
        #expect(refused.hasPrefix("HTTP/1.1 401"))

        let reader = try await Self.openStream(port: port, cookie: cookie)
        #expect(reader.received.hasPrefix("HTTP/1.1 200"))
        #expect(reader.received.lowercased().contains("content-type: text/event-stream"))
        // The subscription is registered before the first bytes are written.
        #expect(collector.services.live.subscriberCount == 1)

        let batch = TestMessages.batch([
            TestMessages.track(
                "live_check", session: "live-session", user: "watcher", properties: ["note": "line1\nline2"])
        ])
        let stored = try await client.postBatch(batch, writeKey: collector.writeKey)
        #expect(stored.status == 200)
        let arrived = await onOwnThread { reader.read(until: "\"event\":\"live_check\"", seconds: 60) }
        #expect(arrived, "\(reader.received)")
        #expect(reader.received.contains("event: stored\n"))
        #expect(reader.received.contains("\"userId\":\"watcher\""))
        #expect(reader.received.contains(#""note":"line1\nline2""#))

        let finished = await withTimeout(60) { () async -> Bool in (try? await collector.shutdown()) != nil }
        #expect(finished == true, "shutdown waited for the open event stream")
        stopped = true
        #expect(await onOwnThread { reader.waitForClose(seconds: 30) })
    }

    /// Opens the live stream with `cookie` and waits for its first comment.
    static func openStream(port: Int, cookie: String) async throws -> EventStreamReader {
        try await onOwnThread {
            let reader = try EventStreamReader(
                port: port, path: "/dashboard/live/events", headers: [("Cookie", cookie)])
            guard reader.read(until: ": connected", seconds: 60) else {
                throw TestFailure("no stream opened: \(reader.received)")
            }
            return reader
        }
    }

    /// Opens a signed-in stream on a fresh collector whose clock the test holds.
    static func withSignedInStream(
        _ body: (RunningCollector, LiveClient, String, EventStreamReader, ManualClock) async throws -> Void
    ) async throws {
        let clock = ManualClock()
        try await CollectorUnderTest.run(prefix: "dashboard-live-end", configure: { $0.clock = clock }) { collector in
            let client = LiveClient(port: collector.port)
            let cookie = try await Self.signIn(client, adminToken: collector.adminToken)
            let reader = try await Self.openStream(port: collector.port, cookie: cookie)
            try await body(collector, client, cookie, reader, clock)
        }
    }

    @Test func signingOutEndsTheOpenStream() async throws {
        try await Self.withSignedInStream { collector, client, cookie, reader, _ in
            let signedOut = try await client.send(
                method: "POST", path: "/dashboard/sign-out", headers: [("Cookie", cookie)])
            #expect(signedOut.status == 303)
            // The response ends (the last chunk of a chunked body): the browser's EventSource
            // reconnects and is refused with 401.
            #expect(
                await onOwnThread { reader.read(until: "\r\n0\r\n\r\n", seconds: 30) },
                "the stream outlived the sign-out: \(reader.received)")
            #expect(collector.services.live.subscriberCount == 0)
        }
    }

    @Test func anExpiredSessionEndsTheOpenStream() async throws {
        try await Self.withSignedInStream { collector, _, _, reader, clock in
            clock.advance(by: 12 * 3600 + 1)
            #expect(
                await onOwnThread { reader.read(until: "\r\n0\r\n\r\n", seconds: 30) },
                "the stream outlived its session: \(reader.received)")
            #expect(collector.services.live.subscriberCount == 0)
        }
    }
}
