import Foundation
import TouchpointCore
import TouchpointDelivery
import TouchpointEvents

/// A transport that sends through ``URLSessionTransport`` (real sockets) and notes when each
/// request started and ended and how it went, so a test can check the client's pacing.
final class RecordingTransport: HTTPTransport {
    struct Exchange: Sendable {
        var started: Date
        var ended: Date
        /// The status, or nil when no response came.
        var status: Int?
        var retryAfter: String?
    }

    private let base = URLSessionTransport()
    private let log = Locked<[Exchange]>([])

    var exchanges: [Exchange] { log.value }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let started = Date()
        do {
            let response = try await base.send(request)
            log.withLock {
                $0.append(
                    Exchange(
                        started: started, ended: Date(), status: response.status,
                        retryAfter: response.headers["Retry-After"]))
            }
            return response
        } catch {
            log.withLock { $0.append(Exchange(started: started, ended: Date(), status: nil)) }
            throw error
        }
    }
}
