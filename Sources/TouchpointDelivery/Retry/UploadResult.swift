import Foundation
import TouchpointCore

/// What the collector's answer (or its absence) means for a batch.
enum UploadResult: Sendable, Hashable {
    /// 2xx: the batch is acknowledged; the collector may list messages it rejected.
    case accepted(rejected: [RejectedMessage])
    /// Try the same batch again later: 401, 403, 408, 429, 5xx, an unexpected status, or no answer.
    /// `network` is true when no HTTP answer came at all.
    case failed(reason: String, retryAfter: TimeInterval?, network: Bool)
    /// 413: the batch is too large for the collector; split it.
    case tooLarge(reason: String)
    /// Another 4xx: this batch will never be accepted; drop it (401 and 403 are not this batch's
    /// fault, see ``classify(_:now:)``).
    case refused(status: Int, reason: String)
    /// The request was cancelled (the dispatcher is shutting down): nothing is learnt.
    case cancelled

    /// A message the collector acknowledged but would not store, with its reason.
    struct RejectedMessage: Sendable, Hashable {
        /// Its position in the batch.
        var index: Int
        /// Why.
        var reason: String
    }

    /// The meaning of a response.
    ///
    /// Only answers that blame the batch itself drop it (400, 404, 422, …); answers about the
    /// credentials (401, 403), the collector's load or health (408, 429, 5xx) are retried.
    static func classify(_ response: TransportResponse, now: Date) -> UploadResult {
        let status = response.status
        let excerpt = response.bodyExcerpt()
        let reason = "\(response.url.absoluteString) answered \(status)" + (excerpt.isEmpty ? "" : ": " + excerpt)
        switch status {
        case 200..<300:
            return .accepted(rejected: Self.rejected(in: response.body))
        case 413:
            return .tooLarge(reason: reason)
        case 408, 429, 500...:
            return .failed(reason: reason, retryAfter: response.retryAfter(now: now), network: false)
        case 401, 403:
            // The write key was refused (revoked, mistyped, a source switched off): no batch would
            // be accepted, and dropping them would empty the log. The events wait, with backoff,
            // for a corrected key or a restored source.
            return .failed(
                reason: reason + " (the write key was refused; events are kept and retried)",
                retryAfter: response.retryAfter(now: now), network: false)
        case 400..<500:
            return .refused(status: status, reason: reason)
        default:
            // 1xx or a redirect that was not followed: a misconfigured endpoint, not this batch's fault.
            return .failed(reason: reason, retryAfter: response.retryAfter(now: now), network: false)
        }
    }

    /// The meaning of a transport failure.
    static func classify(_ error: any Error, url: URL) -> UploadResult {
        if let error = error as? TransportError {
            if error.code == .cancelled { return .cancelled }
            return .failed(reason: error.description, retryAfter: nil, network: true)
        }
        if error is CancellationError { return .cancelled }
        return .failed(reason: "\(url.absoluteString): \(error)", retryAfter: nil, network: true)
    }

    /// The `rejected` list of a Segment-style answer: `{"rejected":[{"index":3,"reason":"…"}]}`.
    static func rejected(in body: [UInt8]) -> [RejectedMessage] {
        guard !body.isEmpty, let json = try? JSONParser.parse(body), let list = json["rejected"]?.arrayValue else {
            return []
        }
        return list.compactMap { item in
            guard let index = item["index"]?.intValue else { return nil }
            return RejectedMessage(index: index, reason: item["reason"]?.stringValue ?? "no reason given")
        }
    }
}
