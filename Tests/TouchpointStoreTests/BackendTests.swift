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

    // Two stores syncing one scenario through a backend, conflicts included, are tested against
    // every backend (in memory and the collector over HTTP) in
    // Tests/TouchpointIntegrationTests/StoreBackendContractTests.swift.

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
