/// Serializes the tests of one test process that set or read process-wide defaults:
/// `TouchpointSDK.start` sets `EventDispatcher.shared`, `SurveyConfigManager.shared`,
/// `PromoConfig.defaultCatalogURL` and `ScreenViews.recorder`, which tests in other suites (and
/// other test targets of the same process) read. Swift Testing's `.serialized` orders the tests
/// of one suite only; every test that touches those defaults runs its body in ``exclusively(isolation:_:)``.
///
/// ```swift
/// @Test func theSetupCall() async throws {
///     try await ProcessDefaults.exclusively {
///         let sdk = try TouchpointSDK.start(writeKey: "wk", collector: url)
///         // …
///         await sdk.shutdown()
///     }
/// }
/// ```
public enum ProcessDefaults {
    private static let lock = ExclusiveLock()

    /// Runs `body` while no other ``exclusively(isolation:_:)`` body of this process runs, in the
    /// caller's isolation; the others wait their turn, in arrival order.
    /// - Returns: what `body` returns.
    public static func exclusively<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async rethrows -> T {
        await lock.acquire()
        do {
            let result = try await body()
            await lock.release()
            return result
        } catch {
            await lock.release()
            throw error
        }
    }
}

/// A lock held across suspension points: waiters are resumed one at a time, in order.
private actor ExclusiveLock {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            held = false
        } else {
            // Handed straight to the next waiter: `held` stays true.
            waiters.removeFirst().resume()
        }
    }
}
