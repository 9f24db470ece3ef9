import Foundation
import TouchpointCore

/// A scenario's stored state and its version (the `ETag` is the quoted version).
public struct ScenarioState: Sendable, Hashable {
    /// The JSON object as stored.
    public var body: String
    /// Counts writes: 1 after the first.
    public var version: Int64

    /// The `ETag` header value: `"<version>"`.
    public var etag: String { "\"\(version)\"" }
}

/// What a scenario write requires of the stored state (from `If-Match` / `If-None-Match`).
public enum ScenarioPrecondition: Sendable, Hashable {
    /// `If-None-Match: *`: nothing stored yet.
    case absent
    /// `If-Match: "<n>"`: the stored version is `n`.
    case version(Int64)
    /// `If-Match: *`: something stored, any version.
    case present
}

/// How much scenario state one source may keep: documents and bytes of JSON, all users together.
public struct ScenarioQuota: Sendable, Hashable {
    /// The most documents (default 100,000).
    public var maximumDocuments: Int64
    /// The most bytes of stored JSON (default 256 MiB).
    public var maximumBytes: Int64

    /// Creates a quota.
    public init(maximumDocuments: Int64 = 100_000, maximumBytes: Int64 = 256 << 20) {
        self.maximumDocuments = maximumDocuments
        self.maximumBytes = maximumBytes
    }

    /// The defaults.
    public static let standard = ScenarioQuota()
}

/// Whose scenario documents a request reads or writes.
public enum ScenarioOwner: Sendable, Hashable {
    /// The namespace's own documents, shared by every user of the source.
    case namespace
    /// One user's documents (`/v1/users/{userId}/scenario/…`).
    case user(String)
}

/// The scenario store's `backend` scope: JSON objects per source, owner, namespace and scenario
/// id, with optimistic concurrency through version ETags and a quota per source.
public final class ScenarioService: Sendable {
    /// The longest user id, namespace or scenario id accepted, in UTF-8 bytes.
    public static let maximumIdentifierBytes = 200

    let storage: any ConfigDocuments
    private let clock: any WallClock
    private let maximumBodyBytes: Int
    /// What each source may keep.
    public let quota: ScenarioQuota

    init(storage: any ConfigDocuments, clock: any WallClock, maximumBodyBytes: Int, quota: ScenarioQuota = .standard) {
        self.storage = storage
        self.clock = clock
        self.maximumBodyBytes = maximumBodyBytes
        self.quota = quota
    }

    /// The state stored for `scenarioId` in `namespace`, or nil.
    public func state(
        source: String, owner: ScenarioOwner = .namespace, namespace: String, scenarioId: String
    ) async throws -> ScenarioState? {
        let key = try Self.key(source: source, owner: owner, namespace: namespace, scenarioId: scenarioId)
        return try await storage.scenario(key).map { ScenarioState(body: $0.body, version: $0.version) }
    }

    /// Writes the state when `precondition` holds.
    /// - Parameter body: a JSON object.
    /// - Returns: the new version.
    /// - Throws: ``CollectorError``: `invalid_json`/`invalid_request` for a body that is not a JSON
    ///   object, `precondition_failed` when someone else wrote first (its message names the stored version).
    public func write(
        source: String, owner: ScenarioOwner = .namespace, namespace: String, scenarioId: String, body: [UInt8],
        precondition: ScenarioPrecondition
    ) async throws -> Int64 {
        let key = try Self.key(source: source, owner: owner, namespace: namespace, scenarioId: scenarioId)
        guard body.count <= maximumBodyBytes else {
            throw CollectorError(.payloadTooLarge, "body: \(body.count) bytes, over the limit of \(maximumBodyBytes)")
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(body)
        } catch {
            throw CollectorError(.invalidJSON, "body: \(error.description)")
        }
        guard case .object = value else {
            throw CollectorError(
                .invalidRequest,
                problem: JSONProblem(path: .root, message: "expected an object, found \(value.typeName)"))
        }
        let condition: ScenarioWriteCondition
        switch precondition {
        case .absent: condition = .create
        case .version(let version): condition = .version(version)
        case .present: condition = .exists
        }
        let result = try await storage.putScenario(
            key, body: String(decoding: body, as: UTF8.self), condition: condition, quota: quota,
            at: Timestamp.milliseconds(clock.now()))
        switch result {
        case .written(let version):
            return version
        case .preconditionFailed(let current):
            let stored = current.map { "the stored version is \"\($0)\"" } ?? "nothing is stored"
            throw CollectorError(.preconditionFailed, "\(namespace)/\(scenarioId): \(stored)")
        case .quotaExceeded(let documents, let bytes):
            throw CollectorError(
                .quotaExceeded,
                "\(namespace)/\(scenarioId): the source's scenario quota is \(quota.maximumDocuments) documents and "
                    + "\(quota.maximumBytes) bytes; it holds \(documents) documents and \(bytes) bytes")
        }
    }

    /// Where one user's documents begin among the stored namespaces: `@user/<length>/<id>/`.
    static func userNamespacePrefix(_ userId: String) -> String {
        "@user/\(userId.utf8.count)/\(userId)/"
    }

    /// The storage key. A user's documents live under a namespace no request can name: `@user/`,
    /// the user id's length, the user id, then the namespace, so no two users' keys can meet and
    /// none meets a namespace's own (a namespace may not start with `@`).
    private static func key(
        source: String, owner: ScenarioOwner, namespace: String, scenarioId: String
    ) throws -> ScenarioKey {
        var names = [("namespace", namespace), ("scenarioID", scenarioId)]
        if case .user(let userId) = owner { names.insert(("userId", userId), at: 0) }
        for (name, value) in names {
            guard !value.isEmpty, value.utf8.count <= maximumIdentifierBytes else {
                throw CollectorError(
                    .invalidParameter, "\(name): must be 1 to \(maximumIdentifierBytes) bytes, got \(value.utf8.count)",
                    path: name)
            }
        }
        guard !namespace.hasPrefix("@") else {
            throw CollectorError(
                .invalidParameter, "namespace: names starting with @ are reserved, got \"\(namespace)\"",
                path: "namespace")
        }
        switch owner {
        case .namespace:
            return ScenarioKey(source: source, namespace: namespace, scenarioId: scenarioId)
        case .user(let userId):
            return ScenarioKey(
                source: source, namespace: userNamespacePrefix(userId) + namespace, scenarioId: scenarioId)
        }
    }
}
