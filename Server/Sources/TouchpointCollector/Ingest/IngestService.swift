import Foundation
import NIOCore
import TouchpointCore

/// Reads ingest request bodies and stores their events, deduplicated on (source, messageId).
///
/// An outcome is returned only after the events are committed to the database, so an
/// acknowledged event is never lost.
public final class IngestService: Sendable {
    let storage: any EventIngest
    let sources: SourceRegistry
    let metrics: CollectorMetrics
    /// The decoder, with the limits it applies.
    public let decoder: BatchDecoder
    private let clock: any WallClock
    let live: LiveEventFeed
    let deletions: DeletionService

    init(
        storage: any EventIngest, sources: SourceRegistry, metrics: CollectorMetrics, limits: IngestLimits,
        clock: any WallClock, live: LiveEventFeed, deletions: DeletionService
    ) {
        self.live = live
        self.deletions = deletions
        self.storage = storage
        self.sources = sources
        self.metrics = metrics
        self.decoder = BatchDecoder(limits: limits)
        self.clock = clock
    }

    /// Reads `body` and stores its valid events.
    /// - Parameters:
    ///   - body: the decompressed request body.
    ///   - endpoint: which ingest endpoint it came to.
    ///   - source: the source the request's `Authorization` header named; nil to take the
    ///     `writeKey` from the body.
    /// - Returns: what was stored, deduplicated and rejected.
    /// - Throws: ``CollectorError`` for a request that is unusable as a whole (`unauthorized`
    ///   without a known write key), or the storage's error when the database fails (nothing
    ///   was acknowledged; the client retries).
    public func ingest(_ body: [UInt8], endpoint: IngestEndpoint, source: String?) async throws -> IngestOutcome {
        let (request, source) = try body.withUnsafeBytes { buffer in
            Result { () throws(CollectorError) in try prepare(buffer, endpoint: endpoint, source: source) }
        }.get()
        return try await store(request, source: source, endpoint: endpoint)
    }

    func ingest(_ body: ByteBuffer, endpoint: IngestEndpoint, source: String?) async throws -> IngestOutcome {
        let (request, source) = try body.withUnsafeReadableBytes { buffer in
            Result { () throws(CollectorError) in try prepare(buffer, endpoint: endpoint, source: source) }
        }.get()
        return try await store(request, source: source, endpoint: endpoint)
    }

    /// Decodes the body and settles which source it writes to.
    private func prepare(_ body: UnsafeRawBufferPointer, endpoint: IngestEndpoint, source: String?)
        throws(CollectorError) -> (DecodedRequest, String)
    {
        let receivedAt = Timestamp.milliseconds(clock.now())
        let request: DecodedRequest
        do {
            request = try decoder.decode(body, endpoint: endpoint, receivedAt: receivedAt)
        } catch {
            // Without a known write key the client learns nothing about the body.
            if source == nil { throw Self.unauthorized }
            throw error
        }
        guard let source = source ?? request.writeKey.flatMap(sources.source(forWriteKey:)) else {
            throw Self.unauthorized
        }
        if case .single = endpoint, let rejection = request.rejections.first {
            // The request's only message is unusable: the request as a whole is bad.
            throw CollectorError(.invalidRequest, rejection.description, path: rejection.path)
        }
        return (request, source)
    }

    /// Moves the events of suppressed ids (see ``DeletionService``) from the messages to the
    /// rejections, each with its place in the batch.
    private func refusingSuppressed(_ request: DecodedRequest, source: String, endpoint: IngestEndpoint)
        -> DecodedRequest
    {
        let refused = request.messages.indices.filter {
            deletions.isSuppressed(
                source: source, userId: request.messages[$0].userId, anonymousId: request.messages[$0].anonymousId)
        }
        guard !refused.isEmpty else { return request }
        // The messages are the batch's events without the rejected ones, in order.
        let rejected = Set(request.rejections.map(\.index))
        let positions = (0..<max(request.eventCount, request.messages.count)).filter { !rejected.contains($0) }
        var request = request
        for index in refused.reversed() {
            let message = request.messages.remove(at: index)
            let position = index < positions.count ? positions[index] : index
            let field =
                deletions.isSuppressed(source: source, userId: message.userId, anonymousId: nil)
                ? "userId" : "anonymousId"
            let path = endpoint == .batch ? "batch[\(position)].\(field)" : field
            request.rejections.append(
                IngestRejection(
                    index: position, path: path, reason: "suppressed: this id's data was deleted on request"))
        }
        request.rejections.sort { $0.index < $1.index }
        deletions.countRefused(refused.count)
        return request
    }

    private func store(_ request: DecodedRequest, source: String, endpoint: IngestEndpoint) async throws
        -> IngestOutcome
    {
        let request = refusingSuppressed(request, source: source, endpoint: endpoint)
        let start = ContinuousClock.now
        let stored: [Bool]
        do {
            stored = try await storage.insert(request.messages, source: source)
        } catch {
            metrics.recordStorageWrite(seconds: (ContinuousClock.now - start).seconds, failed: true)
            throw error
        }
        metrics.recordStorageWrite(seconds: (ContinuousClock.now - start).seconds, failed: false)
        let accepted = stored.reduce(0) { $0 + ($1 ? 1 : 0) }
        let outcome = IngestOutcome(
            source: source, accepted: accepted, duplicates: stored.count - accepted, rejections: request.rejections,
            generatedMessageIds: request.generatedMessageIds)
        metrics.recordIngest(accepted: accepted, rejected: request.rejections.count, deduplicated: outcome.duplicates)
        live.publish(request.messages, stored: stored, source: source)
        return outcome
    }

    static let unauthorized = CollectorError(
        .unauthorized,
        "missing or unknown write key: send it as HTTP Basic user name (writeKey:) or as \"writeKey\" in the body")
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
