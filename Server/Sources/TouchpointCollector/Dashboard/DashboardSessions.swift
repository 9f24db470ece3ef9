import Foundation
import TouchpointCore

/// The dashboard's signed-in sessions, kept in memory: a restart of the collector signs
/// everybody out, and each collector process has its own (sign in to each one).
///
/// A session is a random 256-bit token in an `HttpOnly`, `SameSite=Strict` cookie, valid for
/// ``lifetime`` after sign-in. At most ``maximumSessions`` exist; the oldest goes first.
final class DashboardSessions: Sendable {
    /// The cookie's name.
    static let cookieName = "touchpoint_dashboard"

    /// How long a session lasts, in seconds (12 hours).
    let lifetime: TimeInterval
    /// The most sessions kept at once.
    let maximumSessions: Int
    private let clock: any WallClock
    private let sessions = Locked<[String: Date]>([:])

    init(clock: any WallClock, lifetime: TimeInterval = 12 * 3600, maximumSessions: Int = 1000) {
        self.clock = clock
        self.lifetime = lifetime
        self.maximumSessions = maximumSessions
    }

    /// Starts a session.
    /// - Returns: its token, for the cookie.
    func create() -> String {
        let token = CollectorCredentials.randomHex(bytes: 32)
        let now = clock.now()
        let expiry = now.addingTimeInterval(lifetime)
        sessions.withLock { sessions in
            sessions = sessions.filter { $0.value > now }
            while sessions.count >= maximumSessions, let oldest = sessions.min(by: { $0.value < $1.value }) {
                sessions.removeValue(forKey: oldest.key)
            }
            sessions[token] = expiry
        }
        return token
    }

    /// Whether `token` names a live session.
    func isValid(_ token: String) -> Bool {
        let now = clock.now()
        return sessions.withLock { sessions in
            guard let expiry = sessions[token] else { return false }
            guard expiry > now else {
                sessions.removeValue(forKey: token)
                return false
            }
            return true
        }
    }

    /// Ends a session.
    func remove(_ token: String) {
        sessions.withLock { _ = $0.removeValue(forKey: token) }
    }
}
