import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import TouchpointCore

/// The live tail's wire format: server-sent events (`text/event-stream`), one `stored` event per
/// stored event with its JSON as data, and a comment every ``heartbeatInterval`` so a closed
/// connection is noticed. The stream ends when the client goes away, the viewer signs out or
/// the session expires, or the collector shuts down.
enum LiveEventStream {
    /// Seconds between heartbeat comments.
    static let heartbeatInterval: Duration = .seconds(15)
    /// How often the stream checks that its viewer is still signed in.
    static let checkInterval: Duration = .seconds(1)

    /// The stream of `subscription`'s events, ending when `stillAllowed` turns false (the viewer
    /// signed out or the session expired), checked every ``checkInterval``.
    static func response(_ subscription: LiveSubscription, stillAllowed: @escaping @Sendable () -> Bool) -> Response {
        var headers = DashboardRoutes.securityHeaders(contentType: "text/event-stream; charset=utf-8")
        headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
        let body = ResponseBody { writer in
            // Events and heartbeats merge into one stream of frames, written in turn.
            // Bounded like the feed: a stalled viewer holds at most two buffers of the feed's size.
            let (frames, output) = AsyncStream.makeStream(
                of: String.self, bufferingPolicy: .bufferingNewest(subscription.bufferSize))
            let forwarder = Task {
                for await event in subscription.events { output.yield(frame(event)) }
                output.finish()
            }
            let heartbeat = Task {
                var sinceHeartbeat = Duration.zero
                while !Task.isCancelled {
                    try? await Task.sleep(for: checkInterval)
                    guard stillAllowed() else {
                        subscription.cancel()
                        output.finish()
                        return
                    }
                    sinceHeartbeat += checkInterval
                    if sinceHeartbeat >= heartbeatInterval {
                        sinceHeartbeat = .zero
                        // A comment line: a keep-alive the client ignores.
                        output.yield(": keep-alive\n\n")
                    }
                }
            }
            defer {
                subscription.cancel()
                forwarder.cancel()
                heartbeat.cancel()
                output.finish()
            }
            try await withGracefulShutdownHandler {
                try await writer.write(ByteBuffer(string: "retry: 3000\n: connected\n\n"))
                for await text in frames { try await writer.write(ByteBuffer(string: text)) }
            } onGracefulShutdown: {
                subscription.cancel()
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    /// One event in the stream's format; every line of the data gets its own `data:` field.
    static func frame(_ event: LiveEvent) -> String {
        let event = LiveEvent(source: event.source, event: event.event)  // its JSON parsed once
        let data = event.json.jsonString(sortedKeys: true)
        var frame = "event: stored\nid: \(event.event.messageId.filter { $0 != "\n" && $0 != "\r" })\n"
        for line in data.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            frame += "data: \(line)\n"
        }
        return frame + "\n"
    }
}
