import Foundation
import TouchpointCore

/// What one user has been shown: the record gating decides from, persisted across launches.
///
/// Stored as JSON, one file per user key, by ``SurveyGatingStore``:
/// `{"version": 1, "user": "u1", "lastPresentedAt": "…", "surveys": {"ask_rating": {"presentations": 2, "lastPresentedAt": "…", "lastSessionId": "…"}}}`.
public struct SurveyUserHistory: Sendable, Hashable {
    /// What the user was shown of one survey.
    public struct Entry: Sendable, Hashable {
        /// How many times it was presented.
        public var presentations: Int
        /// When it was last presented.
        public var lastPresentedAt: Date?
        /// The session of the last presentation.
        public var lastSessionId: UUID?

        /// Creates an entry.
        public init(presentations: Int = 0, lastPresentedAt: Date? = nil, lastSessionId: UUID? = nil) {
            self.presentations = presentations
            self.lastPresentedAt = lastPresentedAt
            self.lastSessionId = lastSessionId
        }
    }

    /// The user key: the user id, or `anon`.
    public var userKey: String
    /// When any survey was last presented (for the global cooldown).
    public var lastPresentedAt: Date?
    /// What was shown, by survey id.
    public var surveys: [String: Entry]

    /// Creates a history.
    public init(userKey: String, lastPresentedAt: Date? = nil, surveys: [String: Entry] = [:]) {
        self.userKey = userKey
        self.lastPresentedAt = lastPresentedAt
        self.surveys = surveys
    }

    /// Notes a presentation.
    public mutating func notePresentation(of surveyID: String, sessionId: UUID, at time: Date) {
        var entry = surveys[surveyID, default: Entry()]
        entry.presentations += 1
        entry.lastPresentedAt = time
        entry.lastSessionId = sessionId
        surveys[surveyID] = entry
        lastPresentedAt = max(lastPresentedAt ?? time, time)
    }

    // MARK: JSON

    /// The history as JSON.
    public var json: JSONValue {
        var entries: [String: JSONValue] = [:]
        for (id, entry) in surveys {
            var members: [String: JSONValue] = ["presentations": .int(entry.presentations)]
            if let date = entry.lastPresentedAt { members["lastPresentedAt"] = .string(Timestamp.format(date)) }
            if let session = entry.lastSessionId { members["lastSessionId"] = .string(session.uuidString) }
            entries[id] = .object(members)
        }
        var members: [String: JSONValue] = ["version": 1, "user": .string(userKey), "surveys": .object(entries)]
        if let lastPresentedAt { members["lastPresentedAt"] = .string(Timestamp.format(lastPresentedAt)) }
        return .object(members)
    }

    /// Reads a history from its JSON.
    /// - Throws: a ``JSONProblem`` naming the first malformed field.
    public init(json: JSONValue) throws(JSONProblem) {
        let root = JSONPath.root
        guard case .object(let members) = json else {
            throw JSONProblem(path: root, message: "expected an object, found \(json.typeName)")
        }
        guard members["version"] == 1 else {
            throw JSONProblem(path: root.appending("version"), message: "expected version 1")
        }
        guard case .string(let user)? = members["user"] else {
            throw JSONProblem(path: root.appending("user"), message: "expected a string")
        }
        guard case .object(let entries)? = members["surveys"] else {
            throw JSONProblem(path: root.appending("surveys"), message: "expected an object")
        }
        var surveys: [String: Entry] = [:]
        for (id, value) in entries {
            let path = root.appending("surveys").appending(id)
            guard let count = value["presentations"]?.intValue, count >= 0 else {
                throw JSONProblem(path: path.appending("presentations"), message: "expected a count")
            }
            var entry = Entry(presentations: count)
            entry.lastPresentedAt = try Self.date(value["lastPresentedAt"], at: path.appending("lastPresentedAt"))
            if let text = value["lastSessionId"] {
                guard let id = text.stringValue.flatMap(UUID.init(uuidString:)) else {
                    throw JSONProblem(path: path.appending("lastSessionId"), message: "expected a session id")
                }
                entry.lastSessionId = id
            }
            surveys[id] = entry
        }
        self.init(
            userKey: user,
            lastPresentedAt: try Self.date(members["lastPresentedAt"], at: root.appending("lastPresentedAt")),
            surveys: surveys)
    }

    private static func date(_ value: JSONValue?, at path: JSONPath) throws(JSONProblem) -> Date? {
        guard let value else { return nil }
        guard let date = value.stringValue.flatMap(Timestamp.parse) else {
            throw JSONProblem(path: path, message: "expected an ISO-8601 timestamp")
        }
        return date
    }
}
