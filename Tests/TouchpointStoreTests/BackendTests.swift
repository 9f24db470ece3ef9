import Testing
import TouchpointStore

struct BackendTests {
    @Test func inMemoryBackendFollowsTheETagContract() async throws {
        let backend = InMemoryStoreBackend()
        #expect(try await backend.pull(namespace: "n", scenarioID: "s") == nil)
        let first = try await backend.push(["a": 1], namespace: "n", scenarioID: "s", precondition: .ifAbsent)
        #expect(first == "\"1\"")
        await #expect(throws: StoreError.self) {
            try await backend.push(["a": 2], namespace: "n", scenarioID: "s", precondition: .ifAbsent)
        }
        await #expect(throws: StoreError.self) {
            try await backend.push(["a": 2], namespace: "n", scenarioID: "s", precondition: .ifMatch("\"7\""))
        }
        let second = try await backend.push(["a": 2], namespace: "n", scenarioID: "s", precondition: .ifMatch(first))
        #expect(second == "\"2\"")
        #expect(
            try await backend.pull(namespace: "n", scenarioID: "s")
                == StoreBackendDocument(values: ["a": 2], etag: "\"2\""))
        #expect(try await backend.pull(namespace: "n", scenarioID: "other") == nil)
    }

    @Test func pullPushAndAConflictThatOverwritesNothing() async throws {
        let backend = InMemoryStoreBackend()
        let phone = DefaultStore(appID: "app", configuration: .init(backend: backend))
        let tablet = DefaultStore(appID: "app", configuration: .init(backend: backend))
        let phoneSync = phone.backendSync(namespace: "acme", scenarioID: "checkout")
        let tabletSync = tablet.backendSync(namespace: "acme", scenarioID: "checkout")
        #expect(phone.backendSync(namespace: "acme", scenarioID: "checkout") === phoneSync)

        // Nothing on the server yet: the phone's values create the document.
        #expect(try await phoneSync.pull() == false)
        phoneSync.store.set("cart.coupon", "SPRING")
        try await phoneSync.push()
        #expect(await phoneSync.etag == "\"1\"")

        // The tablet pulls, changes and pushes.
        #expect(try await tabletSync.pull())
        #expect(tabletSync.store.get("cart.coupon") == "SPRING")
        tabletSync.store.set("cart.coupon", "SUMMER")
        try await tabletSync.push()

        // The phone's copy is now stale: its push is a conflict and the server keeps the tablet's.
        phoneSync.store.set("cart.coupon", "WINTER")
        do {
            try await phoneSync.push()
            Issue.record("expected a conflict")
        } catch {
            #expect(error.code == .conflict)
        }
        #expect(backend.document(namespace: "acme", scenarioID: "checkout")?.values == ["cart": ["coupon": "SUMMER"]])
        #expect(phoneSync.store.get("cart.coupon") == "WINTER")  // the local edit is kept, not lost

        // Pull, re-apply, push: now it goes through.
        try await phoneSync.pull()
        #expect(phoneSync.store.get("cart.coupon") == "SUMMER")
        phoneSync.store.set("cart.coupon", "WINTER")
        try await phoneSync.push()
        #expect(backend.document(namespace: "acme", scenarioID: "checkout")?.etag == "\"3\"")
    }

    @Test func withoutAnAdapterSyncIsRefusedAndTheScopeStaysLocal() async {
        let store = DefaultStore(appID: "app")
        let sync = store.backendSync(namespace: "acme")
        sync.store.set("a", 1)
        do {
            try await sync.pull()
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .noBackendAdapter)
        }
        #expect(store.named(.backend(namespace: "acme")).get("a") == 1)
    }

    @Test func pulledValuesAreValidated() async throws {
        let backend = InMemoryStoreBackend()
        _ = try await backend.push(["count": "many"], namespace: "n", scenarioID: nil, precondition: .ifAbsent)
        let store = DefaultStore(appID: "app", configuration: .init(backend: backend))
        let sync = store.backendSync(namespace: "n")
        sync.store.configureValidation(.init(mode: .strict, schema: ["count": Rule(kind: .integer)]))
        sync.store.set("count", 1)
        do {
            try await sync.pull()
            Issue.record("expected a validation failure")
        } catch {
            #expect(error.code == .validationFailed)
        }
        #expect(sync.store.get("count") == 1)
        #expect(await sync.etag == nil)
    }
}
