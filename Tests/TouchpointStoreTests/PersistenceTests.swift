import Foundation
import Testing
import TouchpointCore
import TouchpointStore
import TouchpointTesting

struct PersistenceTests {
    @Test func fileScopeSurvivesReopening() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("scenario.json")
        do {
            let store = DefaultStore(appID: "com.acme.app", version: SemanticVersion(1, 2, 0))
            let file = store.named(.file(url: url))
            file.set("cart.total", 12.5)
            file.set("items[0]", ["title": "Socks", "swatch": .color("#FF0000"), "link": .url("https://a.example/s")])
            file.set("count", 3)
        }  // released: pending writes are flushed
        let document = try #require(try StoreDocument.read(from: url))
        #expect(document.appID == "com.acme.app")
        #expect(document.version == SemanticVersion(1, 2, 0))
        let reopened = DefaultStore(appID: "com.acme.app", version: SemanticVersion(1, 3, 0)).named(.file(url: url))
        #expect(reopened.get("cart.total") == .number(12.5))
        #expect(reopened.get("count") == .integer(3))
        #expect(reopened.get("items[0].swatch") == .color("#FF0000"))
        #expect(reopened.get("items[0].link") == .url("https://a.example/s"))
    }

    @Test func userPrefsSurviveANewStore() throws {
        let suite = TemporarySuite()
        do {
            let store = DefaultStore(appID: "com.acme.prefs")
            store.named(.userPrefs(suite: suite.name)).set("onboarding.done", true)
            store.flush()
        }
        let stored = UserDefaults(suiteName: suite.name)?.data(forKey: "touchpoint.store.com.acme.prefs")
        #expect(stored != nil)
        let reopened = DefaultStore(appID: "com.acme.prefs").named(.userPrefs(suite: suite.name))
        #expect(reopened.get("onboarding.done") == true)
        // Another app's entry in the same suite is separate.
        #expect(DefaultStore(appID: "com.other").named(.userPrefs(suite: suite.name)).snapshot().isEmpty)
    }

    @Test func aWriteStormCostsOneWrite() throws {
        let directory = try TemporaryDirectory()
        let scheduler = ManualWriteScheduler()
        let store = DefaultStore(appID: "storm", configuration: .init(writeScheduler: scheduler))
        let file = store.scoped(.file(url: directory.appending("storm.json")))
        for index in 0..<100_000 { file.set("counter", .integer(index)) }
        #expect(scheduler.count == 1)  // one write scheduled for the whole storm
        #expect(file.persistenceStatistics.writes == 0)
        scheduler.runAll()
        #expect(file.persistenceStatistics.writes == 1)
        file.flush()  // nothing new
        #expect(file.persistenceStatistics == PersistenceStatistics(writes: 1, failures: 0, skipped: 1))
        file.set("counter", -1)
        #expect(scheduler.count == 1)
        scheduler.runAll()
        #expect(file.persistenceStatistics.writes == 2)
        let document = try #require(try StoreDocument.read(from: directory.appending("storm.json")))
        #expect(document.values["counter"] == -1)
    }

    @Test func theDispatchSchedulerWritesOnItsOwn() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("auto.json")
        let store = DefaultStore(appID: "auto", configuration: .init(writeDelay: 0.01))
        let file = store.scoped(.file(url: url))
        file.set("a", 1)
        // The background write, usually one delay later.
        #expect(await eventually { file.persistenceStatistics.writes > 0 })
        #expect(file.persistenceStatistics.writes == 1)
        #expect(try StoreDocument.read(from: url)?.values == ["a": 1])
    }

    @Test func aCorruptFileStartsEmptyIsReportedAndKeptAside() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("broken.json")
        try Data(#"{"touchpointStore":1,"appID":"x","version":"1.0.0","values":{"a":"#.utf8).write(to: url)
        let problems = Recorder<StoreError>()
        let store = DefaultStore(appID: "x", configuration: .init(onProblem: { problems.append($0) }))
        let file = store.scoped(.file(url: url))
        #expect(file.snapshot().isEmpty)
        let problem = try #require(problems.values.first)
        #expect(problem.code == .corruptData)
        #expect(problem.keyPath == url.path)
        #expect(problem.message.contains("invalid JSON at byte 65"))
        #expect(store.problems == problems.values)
        let kept = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("broken.json.corrupt-")
        }
        #expect(kept.count == 1)
        // Writing again does not touch the kept bytes.
        file.set("b", 2)
        file.flush()
        #expect(try StoreDocument.read(from: url)?.values == ["b": 2])
        #expect(try Data(contentsOf: directory.appending(kept[0])).count == 65)
    }

    @Test(arguments: [
        (#"[1,2]"#, "$: expected an object, found array"),
        (#"{"appID":"x","version":"1.0.0","values":{}}"#, "touchpointStore: expected 1"),
        (#"{"touchpointStore":1,"version":"1.0.0","values":{}}"#, "appID: expected a string"),
        (#"{"touchpointStore":1,"appID":"x","version":"one","values":{}}"#, #"version: expected "MAJOR.MINOR.PATCH""#),
        (#"{"touchpointStore":1,"appID":"x","version":"1.0.0","values":[]}"#, "values: expected an object"),
    ])
    func wrongShapesAreNamed(text: String, expected: String) {
        #expect {
            try StoreDocument(bytes: Array(text.utf8), source: "test.json")
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .corruptData && error.keyPath == "test.json" && error.message.contains(expected)
        }
    }

    @Test func corruptUserPrefsAreKeptAside() throws {
        let suite = TemporarySuite()
        let defaults = try #require(UserDefaults(suiteName: suite.name))
        defaults.set(Data("not json".utf8), forKey: "touchpoint.store.app")
        let store = DefaultStore(appID: "app")
        #expect(store.named(.userPrefs(suite: suite.name)).snapshot().isEmpty)
        #expect(store.problems.first?.code == .corruptData)
        #expect(defaults.data(forKey: "touchpoint.store.app.corrupt") == Data("not json".utf8))
    }

    @Test func onlyValidDataIsPersisted() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("valid.json")
        let store = DefaultStore(appID: "valid")
        let file = store.scoped(.file(url: url))
        // Written before the rules existed, so they are in memory but break the rules.
        file.set("age", "old")
        file.set("name", "Ada")
        file.set("items", [["price": 1], ["price": "free"], ["price": 3]])
        file.set("level", 99)
        file.configureValidation(
            .init(
                mode: .strict,
                schema: [
                    "age": Rule(kind: .integer), "items[*].price": Rule(kind: .number),
                    "level": Rule(kind: .integer, defaultValue: 1, max: 10),
                ]))
        file.flush()
        let document = try #require(try StoreDocument.read(from: url))
        #expect(document.values == ["name": "Ada", "items": [["price": 1], [:], ["price": 3]], "level": 1])
        #expect(file.get("age") == "old")  // memory keeps it; only the cache is filtered
    }

    @Test func aFailingWriteIsReportedAndRetried() throws {
        let directory = try TemporaryDirectory()
        // A directory where the file should be: every write fails.
        let url = directory.appending("blocked.json")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let scheduler = ManualWriteScheduler()
        let store = DefaultStore(appID: "blocked", configuration: .init(writeScheduler: scheduler))
        let file = store.scoped(.file(url: url))
        #expect(store.problems.first?.code == .fileFailure)  // reading it failed too
        file.set("a", 1)
        scheduler.runAll()
        #expect(file.persistenceStatistics.failures == 1)
        #expect(scheduler.count == 1)  // a retry is scheduled
        try FileManager.default.removeItem(at: url)
        scheduler.runAll()
        #expect(file.persistenceStatistics.writes == 1)
        #expect(try StoreDocument.read(from: url)?.values == ["a": 1])
    }
}
