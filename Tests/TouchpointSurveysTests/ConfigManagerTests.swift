import Foundation
import Testing
import Touchpoint
import TouchpointTesting

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

/// The manager over a real HTTP server on 127.0.0.1: 200, 304, 500, garbage, and the disk cache.
struct ConfigManagerTests {
    static func body(_ ids: [String], event: String = "done") -> JSONValue {
        [
            "surveys": .array(
                ids.map { id in
                    [
                        "id": .string(id), "title": "T", "message": "M", "options": ["A"],
                        "trigger": ["event": ["name": .string(event)]],
                    ]
                })
        ]
    }

    static let initial = SurveyConfig(surveys: [Fixture.rule("bundled", on: "done")])

    struct Setup {
        let server: TestHTTPServer
        let directory: TemporaryDirectory
        let clock = ManualClock()

        init() throws {
            server = try TestHTTPServer()
            directory = try TemporaryDirectory(prefix: "survey-manager")
        }

        var url: URL { server.url("/v1/config/surveys") }

        func manager(ttl: TimeInterval = 0) -> SurveyConfigManager {
            SurveyConfigManager(
                initial: ConfigManagerTests.initial, cacheDirectory: directory.path + "/cache",
                configuration: RemoteResourceConfiguration(
                    cacheTTL: ttl, requestTimeout: 5,
                    backoff: Backoff.Policy(initialDelay: 0.001, maximumDelay: 0.001, minimumDelay: 0), jitterSeed: 1),
                clock: clock, notificationQueue: nil)
        }
    }

    @Test func a200ReplacesTheConfigAndA304KeepsIt() async throws {
        let setup = try Setup()
        let manager = setup.manager()
        let changes = Locked(0)
        let subscription = manager.objectWillChange.sink { changes.withLock { $0 += 1 } }
        defer { subscription.cancel() }
        #expect(manager.config == Self.initial)

        setup.server.enqueue(.json(Self.body(["remote_1"]), headers: ["ETag": "\"v1\""]))
        let first = await manager.refresh(url: setup.url)
        #expect(first.outcome == .fromNetwork)
        #expect(manager.config.surveys.map(\.id) == ["remote_1"])
        #expect(manager.lastLoad?.isValid == true)
        #expect(changes.value == 1)
        #expect(manager.url == setup.url)

        setup.server.enqueue(TestHTTPResponse(status: 304, headers: ["ETag": "\"v1\""]))
        let second = await manager.refresh(url: setup.url)
        #expect(second.outcome == .notModified)
        #expect(setup.server.requests.last?.headers["If-None-Match"] == "\"v1\"")
        #expect(manager.config.surveys.map(\.id) == ["remote_1"])
        #expect(changes.value == 1, "a 304 changes nothing")
    }

    @Test func errorsAndInvalidBodiesNeverReplaceAGoodConfig() async throws {
        let setup = try Setup()
        let manager = setup.manager()
        setup.server.enqueue(.json(Self.body(["good"])))
        await manager.refresh(url: setup.url)
        #expect(manager.config.surveys.map(\.id) == ["good"])

        let bad: [(TestHTTPResponse, RemoteResourceError.Code)] = [
            (TestHTTPResponse(status: 500), .httpStatus),
            (.text("<html>garbage</html>"), .invalidBody),
            (.json(["surveys": "none"]), .invalidBody),
            (.json(["surveys": [["id": "broken"]]]), .invalidBody),
        ]
        for (response, code) in bad {
            setup.clock.advance(by: 3600)  // past any cool-down
            setup.server.enqueue(response)
            let snapshot = await manager.refresh(url: setup.url)
            #expect(snapshot.outcome == .fromStaleCache)
            #expect(snapshot.lastError?.code == code)
            #expect(manager.config.surveys.map(\.id) == ["good"], "\(response.status) \(response.body.count)")
        }
        #expect(
            manager.remoteSnapshot?.lastError?.message.contains("surveys[0].title: required field is missing") == true)
    }

    @Test func aConfigWithOneMalformedSurveyIsAdoptedWithoutIt() async throws {
        let setup = try Setup()
        let manager = setup.manager()
        var json = Self.body(["kept", "dropped"])
        if case .object(var root) = json, case .array(var surveys)? = root["surveys"],
            case .object(var second) = surveys[1]
        {
            second["trigger"] = ["event": ["name": "done", "properties": ["n": ["op": "gtt", "value": 1]]]]
            surveys[1] = .object(second)
            root["surveys"] = .array(surveys)
            json = .object(root)
        }
        setup.server.enqueue(.json(json))
        await manager.refresh(url: setup.url)
        #expect(manager.config.surveys.map(\.id) == ["kept"])
        #expect(manager.lastLoad?.rejectedSurveys.map(\.id) == ["dropped"])
        #expect(
            manager.lastLoad?.problems.map(\.description) == [
                "surveys[1].trigger.event.properties.n.op: unknown operator \"gtt\""
            ])
    }

    @Test func theCacheServesTheNextLaunchWhileTheServerIsDown() async throws {
        let setup = try Setup()
        let first = setup.manager()
        setup.server.enqueue(.json(Self.body(["cached"]), headers: ["ETag": "\"c1\""]))
        await first.refresh(url: setup.url)
        let cacheFiles = try FileManager.default.contentsOfDirectory(atPath: setup.directory.path + "/cache")
        #expect(cacheFiles.count == 1 && cacheFiles[0].hasPrefix("surveys-"))

        setup.server.stop()
        let relaunched = setup.manager(ttl: 300)
        #expect(relaunched.config == Self.initial)
        relaunched.startAutoRefresh(url: setup.url, interval: 300)
        defer { relaunched.stopAutoRefresh() }
        #expect(relaunched.config.surveys.map(\.id) == ["cached"], "the cache is read when the URL is set")
    }

    @Test func autoRefreshDeliversNewConfigsToAnEngineLive() async throws {
        let setup = try Setup()
        let recorder = try RecorderFixture()
        let manager = setup.manager()
        let presenter = ScriptedPresenter()
        let engine = SurveyEngine(
            manager: manager, recorder: recorder.recorder, presenter: presenter, options: recorder.engineOptions())
        defer { engine.stop() }
        #expect(engine.config == Self.initial)

        let version = Locked(0)
        setup.server.setHandler { _ in
            let current = version.withLock { value in
                value += 1
                return value
            }
            return .json(
                Self.body(["live_\(min(current, 2))"], event: "checkout_success"),
                headers: ["ETag": "\"\(min(current, 2))\""])
        }
        manager.startAutoRefresh(url: setup.url, interval: 0.05)
        defer { manager.stopAutoRefresh() }
        let adopted = await withTimeout(60) {
            while !engine.config.surveys.contains(where: { $0.id.hasPrefix("live_") }) {
                try? await Task.sleep(nanoseconds: 5_000_000)
                if Task.isCancelled { return false }
            }
            return true
        }
        #expect(adopted == true)
        recorder.recorder.record("checkout_success")
        let shown = try #require(await presenter.next())
        #expect(shown.survey.id.hasPrefix("live_"))
        shown.dismiss()
        await engine.waitUntilIdle()
    }

    @Test func updatesStartWithTheCurrentConfig() async throws {
        let setup = try Setup()
        let manager = setup.manager()
        let stream = manager.updates()
        setup.server.enqueue(.json(Self.body(["next"])))
        let collected = await withTimeout(60) {
            var seen: [[String]] = []
            for await config in stream {
                seen.append(config.surveys.map(\.id))
                if seen.count == 1 { await manager.refresh(url: setup.url) }
                if seen.count == 2 { break }
            }
            return seen
        }
        #expect(collected == [["bundled"], ["next"]])
    }
}
