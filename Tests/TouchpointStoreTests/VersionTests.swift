import Foundation
import Testing
import TouchpointStore
import TouchpointTesting

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

struct VersionTests {
    @Test func parsesComparesAndPrints() {
        #expect(SemanticVersion("2.10.3") == SemanticVersion(2, 10, 3))
        #expect(SemanticVersion(major: 2) == SemanticVersion(2, 0, 0))
        #expect(SemanticVersion("2.1") == nil)
        #expect(SemanticVersion("2.1.x") == nil)
        #expect(SemanticVersion("-1.0.0") == nil)
        #expect(SemanticVersion(1, 9, 9) < SemanticVersion(1, 10, 0))
        #expect(SemanticVersion(2, 0, 0).description == "2.0.0")
    }

    @Test func aMajorBumpDropsPersistedScenarioDataOnOpen() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("data.json")
        let suite = TemporarySuite()
        do {
            let v1 = DefaultStore(appID: "app", version: SemanticVersion(1, 4, 2))
            v1.named(.file(url: url)).set("a", 1)
            v1.named(.userPrefs(suite: suite.name)).set("b", 2)
        }
        // A minor bump keeps the data.
        do {
            let v1_5 = DefaultStore(appID: "app", version: SemanticVersion(1, 5, 0))
            #expect(v1_5.named(.file(url: url)).get("a") == 1)
            #expect(v1_5.named(.userPrefs(suite: suite.name)).get("b") == 2)
        }
        let problems = Recorder<StoreError>()
        let v2 = DefaultStore(
            appID: "app", version: SemanticVersion(2, 0, 0), configuration: .init(onProblem: { problems.append($0) }))
        #expect(v2.named(.file(url: url)).snapshot().isEmpty)
        #expect(v2.named(.userPrefs(suite: suite.name)).snapshot().isEmpty)
        #expect(problems.values.map(\.code) == [.dataDropped, .dataDropped])
        v2.flush()
        // The file now records the new version, so the drop happens once.
        #expect(
            try StoreDocument.read(from: url)
                == StoreDocument(appID: "app", version: SemanticVersion(2, 0, 0), values: [:]))
    }

    @Test func updatingTheVersionAtRunTimeDropsWhatIsOpen() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("live.json")
        let store = DefaultStore(appID: "app", version: SemanticVersion(1, 0, 0))
        let session = store.named(.scenarioSession(id: "checkout"))
        let memory = store.named(.appMemory)
        let file = store.scoped(.file(url: url))
        let remote = store.named(.backend(namespace: "acme"))
        for scope in [session, memory, file, remote] { scope.set("x", 1) }
        let seen = Recorder<StoreValue?>()
        let cancellable = session.publisher(for: "x").sink { seen.append($0) }
        defer { cancellable.cancel() }

        store.updateVersion(SemanticVersion(1, 1, 0))
        #expect(session.get("x") == 1)

        store.updateVersion(SemanticVersion(2, 0, 0))
        #expect(store.version == SemanticVersion(2, 0, 0))
        #expect(session.snapshot().isEmpty)
        #expect(memory.snapshot().isEmpty)
        #expect(file.snapshot().isEmpty)
        #expect(remote.get("x") == 1)  // the server's data is not the app's to drop
        #expect(seen.values == [1, nil])
        file.flush()
        #expect(try StoreDocument.read(from: url)?.version == SemanticVersion(2, 0, 0))
        #expect(store.problems.last?.code == .dataDropped)
    }

    @Test func endingAScenarioClearsItsSessionOnly() {
        let store = DefaultStore(appID: "app")
        let checkout = store.startScenario(id: "checkout")
        let onboarding = store.startScenario(id: "onboarding")
        checkout.set("step", 2)
        onboarding.set("step", 5)
        store.endScenario(id: "checkout")
        #expect(checkout.snapshot().isEmpty)
        #expect(onboarding.get("step") == 5)
        // The session store object stays usable for the next run.
        #expect(store.named(.scenarioSession(id: "checkout")) === checkout)
        checkout.set("step", 1)
        #expect(checkout.get("step") == 1)
    }

    @Test func startingAScenarioLoadsItsCacheAndKeepsRequiredDefaults() throws {
        let directory = try TemporaryDirectory()
        let store = DefaultStore(appID: "app")
        let cache = store.named(.file(url: directory.appending("cache.json")))
        cache.set("draft.note", "hello")
        let session = store.named(.scenarioSession(id: "s"))
        session.configureValidation(
            .init(schema: ["cart.total": Rule(kind: .number, required: true, defaultValue: .number(0))]))
        session.set("leftover", true)
        store.startScenario(id: "s", loadingFrom: .file(url: directory.appending("cache.json")))
        #expect(session.snapshot() == ["draft": ["note": "hello"], "cart": ["total": .number(0)]])
    }
}
