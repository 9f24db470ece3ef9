import Foundation

/// Where the local log keeps its files under a base directory.
///
/// ```
/// <base>/users/<user-or-anon>/sessions/<session-id>/session.json
/// <base>/users/<user-or-anon>/sessions/<session-id>/events.jsonl
/// <base>/state/sessions.jsonl        the session journal, in start order
/// <base>/state/current-session.json  the open session, to resume after a relaunch
/// <base>/state/install-id            the anonymous id of this installation
/// <base>/state/consent               `opted-out` or `opted-in` (``EventRecorder/optOut(discardingPending:)``)
/// <base>/state/application.json      the app version and build last launched (automatic events)
/// <base>/state/identity.json         the user and traits `TouchpointSDK.identify` set
/// ```
public struct LogLayout: Sendable, Hashable {
    /// The base directory.
    public let base: URL

    public init(base: URL) { self.base = base }

    /// The base directory's path.
    public var basePath: String { base.path }
    /// The folder of all users' sessions.
    public var usersPath: String { basePath + "/users" }
    /// The folder of small state files.
    public var statePath: String { basePath + "/state" }
    /// The session journal.
    public var journalPath: String { statePath + "/sessions.jsonl" }
    /// The record of the session that is open.
    public var currentSessionPath: String { statePath + "/current-session.json" }
    /// The installation's anonymous id.
    public var installIDPath: String { statePath + "/install-id" }
    /// Whether the user opted out of recording.
    public var consentPath: String { statePath + "/consent" }
    /// The app version and build of the last launch, for `Application Installed` and `Updated`.
    public var applicationPath: String { statePath + "/application.json" }
    /// The user and traits the SDK's `identify` set, until `reset`.
    public var identityPath: String { statePath + "/identity.json" }

    /// A session's folder relative to the base: `users/<folder>/sessions/<id>`.
    public func relativeSessionDirectory(userId: String?, sessionId: UUID) -> String {
        "users/\(Self.userFolder(for: userId))/sessions/\(sessionId.uuidString)"
    }

    /// The absolute path of a folder given relative to the base.
    public func path(_ relative: String) -> String { basePath + "/" + relative }

    /// The folder name for a user id: `anon` for none, otherwise the id with every character
    /// outside `A–Z a–z 0–9 - _ @ .` replaced by `_`, never `.`/`..` or hidden, at most 100 characters.
    ///
    /// Two ids may share a folder (`a/b` and `a_b`); `session.json` keeps the exact id, and
    /// lookups by user compare that.
    public static func userFolder(for userId: String?) -> String {
        guard let userId, !userId.isEmpty else { return "anon" }
        var folder = String(
            String.UnicodeScalarView(
                userId.unicodeScalars.map { scalar in
                    switch scalar {
                    case "A"..."Z", "a"..."z", "0"..."9", "-", "_", "@", ".": return scalar
                    default: return "_"
                    }
                }))
        if folder.hasPrefix(".") { folder = "_" + folder.dropFirst() }
        if folder.count > 100 {
            folder = String(folder.prefix(83)) + "-" + StableHash.hex(of: userId)
        }
        return folder
    }
}
