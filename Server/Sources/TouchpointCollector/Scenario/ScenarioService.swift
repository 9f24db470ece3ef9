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

/// The scenario store's `backend` scope: JSON objects per source, namespace and scenario id, with
/// optimistic concurrency through version ETags.
public final class ScenarioService: Sendable {
    /// The longest namespace or scenario id accepted, in UTF-8 bytes.
    public static let maximumIdentifierBytes = 200

    let storage: any CollectorStorage
    private let clock: any WallClock
    private let maximumBodyBytes: Int

    init(storage: any CollectorStorage, clock: any WallClock, maximumBodyBytes: Int) {
        self.storage = storage
        self.clock = clock
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// The state stored for `scenarioId` in `namespace`, or nil.
    public func state(source: String, namespace: String, scenarioId: String) async throws -> ScenarioState? {
        let key = try Self.key(source: source, namespace: namespace, scenarioId: scenarioId)
        return try await storage.scenario(key).map { ScenarioState(body: $0.body, version: $0.version) }
    }

    /// Writes the state when `precondition` holds.
    /// - Parameter body: a JSON object.
    /// - Returns: the new version.
    /// - Throws: ``CollectorError``: `invalid_json`/`invalid_request` for a body that is not a JSON
    ///   object, `precondition_failed` when someone else wrote first (its message names the stored version).
    public func write(
        source: String, namespace: String, scenarioId: String, body: [UInt8], precondition: ScenarioPrecondition
    ) async throws -> Int64 {
        let key = try Self.key(source: source, namespace: namespace, scenarioId: scenarioId)
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
            key, body: String(decoding: body, as: UTF8.self), condition: condition,
            at: Timestamp.milliseconds(clock.now()))
        switch result {
        case .written(let version):
            return version
        case .preconditionFailed(let current):
            let stored = current.map { "the stored version is \"\($0)\"" } ?? "nothing is stored"
            throw CollectorError(.preconditionFailed, "\(namespace)/\(scenarioId): \(stored)")
        }
    }

    private static func key(source: String, namespace: String, scenarioId: String) throws -> ScenarioKey {
        for (name, value) in [("namespace", namespace), ("scenarioID", scenarioId)] {
            guard !value.isEmpty, value.utf8.count <= maximumIdentifierBytes else {
                throw CollectorError(
                    .invalidParameter, "\(name): must be 1 to \(maximumIdentifierBytes) bytes, got \(value.utf8.count)")
            }
        }
        return ScenarioKey(source: source, namespace: namespace, scenarioId: scenarioId)
    }
}
