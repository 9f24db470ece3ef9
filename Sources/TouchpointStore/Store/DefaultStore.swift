import Foundation
import Logging
import TouchpointCore

/// The scenario data of one app: a ``ScopedStore`` per ``Scope``, created on first use.
///
/// ```swift
/// let store = DefaultStore(appID: "com.acme.app", version: SemanticVersion(2, 0, 0))
/// let prefs = store.named(.userPrefs())
/// prefs.set("onboarding.done", true)
/// ```
///
/// ## Versions
///
/// `version` is the app's *data* version, given by the app when it creates the store (bump its
/// major number when scenario data written by earlier releases must not be read). Persistent
/// scopes record it in what they write; when a scope opens data recorded under another major
/// version, it drops that data and starts empty (no migrations). ``updateVersion(_:)`` does the
/// same at run time for the scopes already open: a major change clears the app-memory, session,
/// file and user-prefs scopes and rewrites the persistent ones empty under the new version.
/// Backend scopes are left alone: the server's copy is not the app's to drop.
public final class DefaultStore: Store {
    /// The app whose data this is.
    public let appID: String
    let context: StoreContext
    private let stores = Locked<[Scope: ScopedStore]>([:])
    private let syncs = Locked<[Scope: StoreBackendSync]>([:])

    /// Creates a store for an app.
    /// - Parameters:
    ///   - appID: the app, e.g. its bundle identifier; names its `UserDefaults` entry and is
    ///     recorded in its files.
    ///   - version: the app's data version (default 1.0.0); see "Versions" above.
    ///   - configuration: backend, write coalescing, problem reporting.
    public init(
        appID: String, version: SemanticVersion = SemanticVersion(1, 0, 0), configuration: StoreConfiguration = .init()
    ) {
        self.appID = appID
        self.context = StoreContext(appID: appID, version: version, configuration: configuration)
    }

    deinit { flush() }

    /// The app's data version.
    public var version: SemanticVersion { context.version }

    /// Problems reported so far (corrupt or unreadable data, failed writes, dropped data), newest
    /// last, at most 50.
    public var problems: [StoreError] { context.problems }

    /// The store of one scope; the same scope always gives the same store.
    public func named(_ scope: Scope) -> any KeyValueStore { scoped(scope) }

    /// The store of one scope, as its concrete type (for ``ScopedStore/flush()``, the async
    /// streams and the inspector).
    public func scoped(_ scope: Scope) -> ScopedStore {
        stores.withLock { stores in
            if let store = stores[scope] { return store }
            let store = ScopedStore(scope: scope, context: context, persistence: persistence(for: scope))
            stores[scope] = store
            return store
        }
    }

    private func persistence(for scope: Scope) -> (any PersistenceSink)? {
        switch scope {
        case .file(let url): return FileSink(path: url.path)
        case .userPrefs(let suite): return UserDefaultsSink(suite: suite, key: "touchpoint.store.\(appID)")
        case .appMemory, .scenarioSession, .backend: return nil
        }
    }

    // MARK: Scenarios

    /// Starts a scenario: its session store is cleared and, when `cache` is given, filled with
    /// that scope's top-level values (over the required defaults, validated like any write; when
    /// they break a rule the session starts without them and the problem is reported).
    /// - Parameters:
    ///   - id: the scenario.
    ///   - cache: a scope to copy initial values from, e.g. a file scope the scenario saves to.
    /// - Returns: the scenario's session store.
    @discardableResult
    public func startScenario(id: String, loadingFrom cache: Scope? = nil) -> ScopedStore {
        let session = scoped(.scenarioSession(id: id))
        session.reset(to: [:])
        if let cache {
            // On top of what the reset left (required defaults), as one validated write.
            let values = session.snapshot().merging(scoped(cache).snapshot()) { _, cached in cached }
            if case .failed(let reason) = session.replaceAll(with: values) {
                context.report(
                    StoreError(.validationFailed, keyPath: "\(cache)", "scenario \(id) started empty: \(reason)"),
                    level: .warning)
            }
        }
        return session
    }

    /// Ends a scenario: its session store is cleared (subscribers see the values go). The store
    /// object stays usable for the next run of the scenario.
    public func endScenario(id: String) {
        let session = stores.withLock { $0[.scenarioSession(id: id)] }
        session?.reset(to: [:])
    }

    // MARK: Versions

    /// Changes the app's data version. A different major version drops the scenario data of the
    /// scopes that are open (app memory, sessions, files, user prefs); persistent ones are
    /// rewritten empty, under the new version. Scopes opened later check their own data.
    public func updateVersion(_ version: SemanticVersion) {
        let previous = context.version
        context.version = version
        guard version.major != previous.major else { return }
        let open = stores.withLock { Array($0.values) }
        for store in open {
            if case .backend = store.scope { continue }
            store.reset(to: [:])
        }
        context.report(
            StoreError(.dataDropped, "data version \(previous) → \(version): scenario data and caches dropped"),
            level: .notice)
    }

    /// Writes every persistent scope that changed since its last write.
    public func flush() {
        for store in stores.withLock({ Array($0.values) }) { store.flush() }
    }

    // MARK: Backend

    /// The synchroniser of a backend scope, which pulls and pushes its values through the
    /// configured ``StoreBackendAdapter``; the same scope always gives the same synchroniser.
    public func backendSync(namespace: String, scenarioID: String? = nil) -> StoreBackendSync {
        let scope = Scope.backend(namespace: namespace, scenarioID: scenarioID)
        let store = scoped(scope)
        return syncs.withLock { syncs in
            if let sync = syncs[scope] { return sync }
            let sync = StoreBackendSync(
                store: store, adapter: context.configuration.backend, namespace: namespace, scenarioID: scenarioID)
            syncs[scope] = sync
            return sync
        }
    }
}
