import Foundation

/// Where a store's values live.
///
/// | scope | kept | cleared |
/// | --- | --- | --- |
/// | ``appMemory`` | in memory, for the process | on a major version bump |
/// | ``userPrefs(suite:)`` | `UserDefaults` (the suite, or standard), one entry per app | on a major version bump |
/// | ``file(url:)`` | a JSON file, written atomically and coalesced | on a major version bump |
/// | ``scenarioSession(id:)`` | in memory, per scenario | when the scenario ends, on a major version bump |
/// | ``backend(namespace:scenarioID:)`` | in memory, synchronised with a server by ``StoreBackendSync`` | never by the store |
public enum Scope: Sendable, Hashable, CustomStringConvertible {
    /// In memory, for the life of the process.
    case appMemory
    /// Persisted in `UserDefaults(suiteName:)` (nil: `.standard`) under `touchpoint.store.<appID>`.
    case userPrefs(suite: String? = nil)
    /// Persisted as a JSON document (see ``StoreDocument``) at `url`.
    case file(url: URL)
    /// In memory for one scenario; cleared by ``DefaultStore/endScenario(id:)``.
    case scenarioSession(id: String)
    /// In memory, pulled from and pushed to a server through a ``StoreBackendAdapter``.
    case backend(namespace: String, scenarioID: String? = nil)

    /// The scenario a scope belongs to, when it has one.
    public var scenarioID: String? {
        switch self {
        case .scenarioSession(let id): return id
        case .backend(_, let scenarioID): return scenarioID
        default: return nil
        }
    }

    /// A short name for logs and the inspector: `file(/path/store.json)`, `scenarioSession(checkout)`.
    public var description: String {
        switch self {
        case .appMemory: return "appMemory"
        case .userPrefs(let suite): return "userPrefs(\(suite ?? "standard"))"
        case .file(let url): return "file(\(url.path))"
        case .scenarioSession(let id): return "scenarioSession(\(id))"
        case .backend(let namespace, let scenarioID): return "backend(\(namespace)/\(scenarioID ?? "-"))"
        }
    }
}
