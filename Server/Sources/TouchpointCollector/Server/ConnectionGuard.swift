import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import TouchpointCore

/// How long a client may take and how many connections may be open: what keeps a few hundred
/// slow or idle clients from holding a server on the open internet.
///
/// A new connection must deliver a complete request head within ``headTimeout``; the body must
/// arrive within ``bodyTimeout`` of the head; between requests a keep-alive connection may stay
/// silent for ``idleTimeout``, and once the next request's first byte arrives its head must be
/// complete within ``headTimeout``. A connection past a deadline is closed. Beyond
/// ``maximumConnections`` open connections, a new one is answered `503` with `Retry-After` and
/// closed.
public struct ConnectionLimits: Sendable, Equatable {
    /// The longest a request head (request line and headers) may take (default 10 s).
    public var headTimeout: Duration
    /// The longest a request body may take after its head (default 30 s: 500 KB at 17 KB/s).
    public var bodyTimeout: Duration
    /// The longest a keep-alive connection may stay silent between requests (default 60 s).
    public var idleTimeout: Duration
    /// The most connections open at once (default 1,024).
    public var maximumConnections: Int

    /// Creates limits; the defaults suit a public server.
    public init(
        headTimeout: Duration = .seconds(10), bodyTimeout: Duration = .seconds(30),
        idleTimeout: Duration = .seconds(60),
        maximumConnections: Int = 1024
    ) {
        self.headTimeout = headTimeout
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
        self.maximumConnections = maximumConnections
    }

    /// The defaults.
    public static let standard = ConnectionLimits()

    /// Throws a ``CollectorError`` naming the limit that is not positive.
    func validate() throws(CollectorError) {
        for (name, value) in [
            ("head timeout", headTimeout), ("body timeout", bodyTimeout), ("idle timeout", idleTimeout),
        ]
        where value <= .zero {
            throw CollectorError(.invalidConfiguration, "the \(name) must be longer than zero (it is \(value))")
        }
        guard maximumConnections > 0 else {
            throw CollectorError(
                .invalidConfiguration, "the connection limit must be at least 1 (it is \(maximumConnections))")
        }
    }
}

/// Counts open connections across the server's event loops.
final class ConnectionCounter: Sendable {
    private let open = Locked(0)
    let maximum: Int

    init(maximum: Int) { self.maximum = maximum }

    /// Takes a place; false when every place is taken.
    func acquire() -> Bool {
        open.withLock { open in
            guard open < maximum else { return false }
            open += 1
            return true
        }
    }

    func release() { open.withLock { $0 -= 1 } }

    var current: Int { open.withLock { $0 } }
}

/// Puts a ``ConnectionGuardHandler`` in front of a child channel's own handlers (and a
/// ``RequestPhaseHandler`` after its HTTP decoding, through `HTTP1Channel`'s additional handlers).
struct GuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let limits: ConnectionLimits
    let counter: ConnectionCounter
    let metrics: CollectorMetrics?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(
                ConnectionGuardHandler(limits: limits, counter: counter, metrics: metrics))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Where a connection is between requests, and the one deadline that goes with it.
final class ConnectionDeadline {
    enum Phase: Equatable {
        /// Just opened: the first head is due within the head timeout.
        case opened
        /// Between requests, nothing of the next one seen yet: the idle timeout runs.
        case idle
        /// The next request's first bytes are in: its head is due within the head timeout.
        case readingHead
        /// The head is in: the body is due within the body timeout.
        case readingBody
        /// The request is in; the server is answering (no deadline: the handler's own limits apply).
        case answering
    }

    private(set) var phase = Phase.opened
    private var requestsInFlight = 0
    private var timer: Scheduled<Void>?
    private let limits: ConnectionLimits
    private let metrics: CollectorMetrics?

    init(limits: ConnectionLimits, metrics: CollectorMetrics?) {
        self.limits = limits
        self.metrics = metrics
    }

    func opened(_ context: ChannelHandlerContext) {
        arm(limits.headTimeout, context)
    }

    func bytesArrived(_ context: ChannelHandlerContext) {
        guard phase == .idle else { return }
        phase = .readingHead
        arm(limits.headTimeout, context)
    }

    func headArrived(_ context: ChannelHandlerContext) {
        requestsInFlight += 1
        phase = .readingBody
        arm(limits.bodyTimeout, context)
    }

    func requestEnded() {
        phase = .answering
        disarm()
    }

    func responseEnded(_ context: ChannelHandlerContext) {
        requestsInFlight = max(0, requestsInFlight - 1)
        guard requestsInFlight == 0, phase == .answering else { return }
        phase = .idle
        arm(limits.idleTimeout, context)
    }

    func disarm() {
        timer?.cancel()
        timer = nil
    }

    private func arm(_ timeout: Duration, _ context: ChannelHandlerContext) {
        disarm()
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        let loop = context.eventLoop.assumeIsolated()
        timer = loop.scheduleTask(in: .nanoseconds(nanoseconds)) { [metrics] in
            metrics?.recordConnectionTimedOut()
            context.close(promise: nil)
        }
    }
}

/// First in a connection's pipeline: takes a place among the open connections (or answers
/// `503` and closes), starts the clock, and notices the first bytes of each request.
final class ConnectionGuardHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let deadline: ConnectionDeadline
    private let counter: ConnectionCounter
    private let metrics: CollectorMetrics?
    private var holdsPlace = false
    private var refused = false

    init(limits: ConnectionLimits, counter: ConnectionCounter, metrics: CollectorMetrics?) {
        self.deadline = ConnectionDeadline(limits: limits, metrics: metrics)
        self.counter = counter
        self.metrics = metrics
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        if !refused { context.fireChannelActive() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline.disarm()
        if holdsPlace {
            holdsPlace = false
            counter.release()
        }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline.disarm()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        deadline.bytesArrived(context)
        context.fireChannelRead(data)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !holdsPlace, !refused else { return }
        guard counter.acquire() else {
            refused = true
            metrics?.recordConnectionRefused()
            let body = "{\"error\":\"too many open connections (the limit is \(counter.maximum)); try again shortly\"}"
            let response =
                "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                + "Connection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response))).whenComplete { _ in
                channel.close(promise: nil)
            }
            return
        }
        holdsPlace = true
        deadline.opened(context)
    }
}

/// After HTTP decoding: moves the connection's deadline from head to body to answer to idle.
final class RequestPhaseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var deadline: ConnectionDeadline?

    func handlerAdded(context: ChannelHandlerContext) {
        deadline = try? context.pipeline.syncOperations.handler(type: ConnectionGuardHandler.self).deadline
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: deadline?.headArrived(context)
        case .body: break
        case .end: deadline?.requestEnded()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            deadline?.responseEnded(context)
        }
        context.write(data, promise: promise)
    }
}

@available(*, unavailable)
extension ConnectionGuardHandler: Sendable {}

@available(*, unavailable)
extension RequestPhaseHandler: Sendable {}
