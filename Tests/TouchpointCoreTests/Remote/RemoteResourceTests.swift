import Foundation
import Testing
import TouchpointTesting

@testable import TouchpointCore

/// The test resource's value: a version number and a name, validated like a real config.
struct TestConfig: Sendable, Equatable {
    var version: Int
    var name: String

    init(version: Int, name: String) {
        self.version = version
        self.name = name
    }

    init(json: JSONValue) throws {
        guard let version = json["version"]?.intValue else {
            throw JSONProblem(path: JSONPath.root.appending("version"), message: "expected an integer")
        }
        guard let name = json["name"]?.stringValue else {
            throw JSONProblem(path: JSONPath.root.appending("name"), message: "expected a string")
        }
        self.init(version: version, name: name)
    }

    static func body(_ version: Int, _ name: String = "config") -> JSONValue {
        ["version": .int(version), "name": .string(name)]
    }
}

/// A server, a temporary cache directory and a manual clock, and resources built over them.
struct RemoteFixture {
    let server: TestHTTPServer
    let directory: TemporaryDirectory
    let clock = ManualClock()
    let transport = URLSessionTransport()

    init(handler: @escaping TestHTTPServer.Handler = { _ in TestHTTPResponse(status: 404) }) throws {
        server = try TestHTTPServer(handler: handler)
        directory = try TemporaryDirectory(prefix: "remote-resource")
    }

    var cacheDirectory: String { directory.path + "/cache" }
    var url: URL { server.url("/config.json") }

    func resource(
        ttl: TimeInterval = 60,
        backoff: Backoff.Policy = Backoff.Policy(initialDelay: 5, maximumDelay: 900, minimumDelay: 1),
        gate: RequestGate? = nil
    ) -> RemoteResource<TestConfig> {
        RemoteResource(
            url: url,
            cacheDirectory: cacheDirectory,
            cacheName: "config",
            transport: transport,
            configuration: RemoteResourceConfiguration(
                cacheTTL: ttl, requestTimeout: 5, backoff: backoff, jitterSeed: 7, gate: gate),
            clock: clock,
            decodeJSON: { try TestConfig(json: $0) }
        )
    }

    var cachePath: String { cacheDirectory + "/config.cache" }

    func cacheBytes() throws -> [UInt8]? { try AtomicFile.read(cachePath) }
}

struct RemoteResourceTests {
    @Test func a200BecomesTheValueAndIsCached() async throws {
        let fixture = try RemoteFixture()
        fixture.server.enqueue(.json(TestConfig.body(1, "first"), headers: ["ETag": "\"v1\""]))
        let resource = fixture.resource()
        let snapshot = await resource.refresh()
        #expect(snapshot.outcome == .fromNetwork)
        #expect(snapshot.value == TestConfig(version: 1, name: "first"))
        #expect(snapshot.etag == "\"v1\"")
        #expect(snapshot.fetchedAt == fixture.clock.now())
        #expect(snapshot.lastError == nil)
        #expect(resource.cachePath == fixture.cachePath)

        let cache = try #require(try fixture.cacheBytes())
        let newline = try #require(cache.firstIndex(of: 10))
        let header = try JSONParser.parse(Array(cache[..<newline]))
        #expect(header["etag"] == "\"v1\"")
        #expect(header["url"]?.stringValue == fixture.url.absoluteString)
        #expect(try JSONParser.parse(Array(cache[(newline + 1)...])) == TestConfig.body(1, "first"))
        #expect(fixture.server.requests.first?.headers["If-None-Match"] == nil)
    }

    @Test func a304KeepsTheCachedValueAndSendsIfNoneMatch() async throws {
        let fixture = try RemoteFixture()
        fixture.server.enqueue(
            .json(TestConfig.body(1), headers: ["ETag": "\"v1\""]),
            TestHTTPResponse(status: 304, headers: ["ETag": "\"v1\""])
        )
        let resource = fixture.resource(ttl: 60)
        await resource.refresh()
        fixture.clock.advance(by: 61)
        let snapshot = await resource.refresh()
        #expect(snapshot.outcome == .notModified)
        #expect(snapshot.value == TestConfig(version: 1, name: "config"))
        #expect(snapshot.fetchedAt == fixture.clock.now())
        #expect(fixture.server.requests.count == 2)
        #expect(fixture.server.requests[1].headers["if-none-match"] == "\"v1\"")
        // The TTL starts again from the 304.
        #expect(await resource.refresh().outcome == .fromFreshCache)
        #expect(fixture.server.requestCount == 2)
    }

    @Test(arguments: FailureKind.allCases)
    func aFailureKeepsTheLastGoodValueAndLeavesTheCacheAlone(kind: FailureKind) async throws {
        let fixture = try RemoteFixture()
        fixture.server.enqueue(.json(TestConfig.body(1, "good"), headers: ["ETag": "\"v1\""]))
        let resource = fixture.resource(ttl: 10)
        await resource.refresh()
        let cacheBefore = try fixture.cacheBytes()
        #expect(resource.value == TestConfig(version: 1, name: "good"))

        switch kind {
        case .serverError: fixture.server.enqueue(.text("boom", status: 500))
        case .notJSON: fixture.server.enqueue(.text("<html>maintenance</html>"))
        case .invalidConfig: fixture.server.enqueue(.json(["version": "two", "name": "bad"]))
        case .refused: fixture.server.stop()
        // Every answer resets: on a kept-alive connection the client may resend once.
        case .reset: fixture.server.setHandler { _ in .fault(.reset) }
        }
        fixture.clock.advance(by: 11)
        let snapshot = await resource.refresh()

        #expect(snapshot.outcome == .fromStaleCache)
        #expect(snapshot.value == TestConfig(version: 1, name: "good"))
        #expect(snapshot.consecutiveFailures == 1)
        let error = try #require(snapshot.lastError)
        #expect(error.url == fixture.url)
        switch kind {
        case .serverError:
            #expect(error.code == .httpStatus)
            #expect(error.status == 500)
        case .notJSON:
            #expect(error.code == .invalidBody)
            #expect(error.message.contains("invalid JSON"))
        case .invalidConfig:
            #expect(error.code == .invalidBody)
            #expect(error.message.contains("version: expected an integer"))
        case .refused:
            #expect(error.code == .transport)
            #expect(error.transportError?.code == .connectionFailed)
        case .reset:
            #expect(error.code == .transport)
        }
        #expect(try fixture.cacheBytes() == cacheBefore)
        #expect(resource.value == TestConfig(version: 1, name: "good"))
    }

    enum FailureKind: CaseIterable, Sendable {
        case serverError, notJSON, invalidConfig, refused, reset
    }

    @Test func aColdStartWithoutNetworkServesTheStaleCache() async throws {
        let fixture = try RemoteFixture()
        fixture.server.enqueue(.json(TestConfig.body(3, "cached"), headers: ["ETag": "\"v3\""]))
        await fixture.resource(ttl: 60).refresh()
        fixture.server.stop()
        fixture.clock.advance(by: 3600)

        let restarted = fixture.resource(ttl: 60)
        // Before any refresh, the cached value is already there.
        #expect(restarted.value == TestConfig(version: 3, name: "cached"))
        #expect(restarted.snapshot.outcome == nil)
        let snapshot = await restarted.refresh()
        #expect(snapshot.outcome == .fromStaleCache)
        #expect(snapshot.value == TestConfig(version: 3, name: "cached"))
        #expect(snapshot.etag == "\"v3\"")
        #expect(snapshot.lastError?.transportError?.code == .connectionFailed)
    }

    @Test func aColdStartWithAFreshCacheMakesNoRequest() async throws {
        let fixture = try RemoteFixture()
        fixture.server.enqueue(.json(TestConfig.body(3)))
        await fixture.resource(ttl: 60).refresh()
        fixture.clock.advance(by: 30)
        let snapshot = await fixture.resource(ttl: 60).refresh()
        #expect(snapshot.outcome == .fromFreshCache)
        #expect(snapshot.value?.version == 3)
        #expect(fixture.server.requestCount == 1)
    }

    @Test func noCacheAndNoNetworkIsNoValueWithAnError() async throws {
        let fixture = try RemoteFixture()
        fixture.server.stop()
        let snapshot = await fixture.resource().refresh()
        #expect(snapshot.outcome == .noValue)
        #expect(snapshot.value == nil)
        #expect(snapshot.lastError?.code == .transport)
        #expect(try fixture.cacheBytes() == nil)
    }

    @Test func theTTLIsRespectedAndForceRefreshBypassesIt() async throws {
        let fixture = try RemoteFixture { request in
            .json(TestConfig.body(request.sequence), headers: ["ETag": "\"v\(request.sequence)\""])
        }
        let resource = fixture.resource(ttl: 300)
        #expect(await resource.refresh().value?.version == 0)
        fixture.clock.advance(by: 299)
        #expect(await resource.refresh().outcome == .fromFreshCache)
        #expect(fixture.server.requestCount == 1)

        let forced = await resource.forceRefresh()
        #expect(forced.outcome == .fromNetwork)
        #expect(forced.value?.version == 1)
        #expect(fixture.server.requestCount == 2)
        // A forced refresh asks for the whole body: no If-None-Match.
        #expect(fixture.server.requests[1].headers["If-None-Match"] == nil)

        fixture.clock.advance(by: 300)
        #expect(await resource.refresh().value?.version == 2)
        #expect(fixture.server.requests[2].headers["If-None-Match"] == "\"v1\"")
    }

    @Test func failuresCoolDownUnderTheManualClock() async throws {
        let fixture = try RemoteFixture { _ in .text("down", status: 500) }
        let resource = fixture.resource(ttl: 60)
        // An app asking every 10 seconds for an hour.
        for _ in 0..<360 {
            await resource.refresh()
            fixture.clock.advance(by: 10)
        }
        let requests = fixture.server.requestCount
        #expect(requests >= 5)
        #expect(requests <= 25)
        #expect(resource.snapshot.consecutiveFailures == requests)
        #expect(resource.snapshot.outcome == .noValue)
    }

    @Test func retryAfterIsHonoured() async throws {
        let fixture = try RemoteFixture()
        fixture.server.enqueue(TestHTTPResponse(status: 503, headers: ["Retry-After": "120"]))
        fixture.server.setHandler { _ in .json(TestConfig.body(1)) }
        let resource = fixture.resource(backoff: Backoff.Policy(initialDelay: 1, maximumDelay: 1))
        let failed = await resource.refresh()
        #expect(failed.lastError?.status == 503)
        #expect(failed.nextAttempt == fixture.clock.now().addingTimeInterval(120))
        fixture.clock.advance(by: 119)
        #expect(await resource.refresh().outcome == .noValue)
        #expect(fixture.server.requestCount == 1)
        fixture.clock.advance(by: 1)
        #expect(await resource.refresh().outcome == .fromNetwork)
        #expect(fixture.server.requestCount == 2)
    }

    @Test(arguments: CorruptCache.allCases)
    func aCorruptCacheFileIsIgnoredAndReported(corruption: CorruptCache) async throws {
        let fixture = try RemoteFixture { _ in .json(TestConfig.body(5), headers: ["ETag": "\"v5\""]) }
        try AtomicFile.write(corruption.bytes(url: fixture.url), to: fixture.cachePath)
        let resource = fixture.resource()
        let before = resource.snapshot
        #expect(before.value == nil)
        #expect(before.cacheError?.code == .corruptCache)
        #expect(before.cacheError?.message.contains(fixture.cachePath) == true)

        let snapshot = await resource.refresh()
        #expect(snapshot.outcome == .fromNetwork)
        #expect(snapshot.value?.version == 5)
        // The sent request was not conditional: the corrupt file's ETag (if any) was not used.
        #expect(fixture.server.requests.first?.headers["If-None-Match"] == nil)
        // The file is replaced by a good one.
        #expect(fixture.resource().value?.version == 5)
    }

    enum CorruptCache: CaseIterable, Sendable {
        case garbage, truncated, badHeader, bodyFailsValidation

        func bytes(url: URL) -> [UInt8] {
            let header =
                #"{"etag":"\"v1\"","fetchedAt":"2026-01-01T00:00:00.000Z","length":30,"url":"\#(url.absoluteString)","version":1}"#
            switch self {
            case .garbage: return [0xFF, 0x00, 0x13, 0x37]
            case .truncated: return Array((header + "\n" + #"{"version":1,"#).utf8)
            case .badHeader: return Array(#"{"etag":"#.utf8) + [10] + Array(#"{"version":1,"name":"x"}"#.utf8)
            case .bodyFailsValidation:
                let body = #"{"version":"1","name":"xxxxx"}"#
                return Array((header + "\n" + body).utf8)
            }
        }
    }

    @Test func aCacheForAnotherURLIsNotUsed() async throws {
        let fixture = try RemoteFixture()
        fixture.server.enqueue(.json(TestConfig.body(1)))
        await fixture.resource().refresh()
        let other = RemoteResource<TestConfig>(
            url: fixture.server.url("/other.json"),
            cacheDirectory: fixture.cacheDirectory,
            cacheName: "config",
            transport: fixture.transport,
            clock: fixture.clock,
            decodeJSON: { try TestConfig(json: $0) }
        )
        #expect(other.value == nil)
        #expect(other.snapshot.cacheError == nil)
    }

    @Test func concurrentRefreshesShareOneRequest() async throws {
        let gate = Gate()
        let fixture = try RemoteFixture { _ in
            await gate.pass()  // the answer waits until every refresh has joined the request
            return .json(TestConfig.body(1))
        }
        // A TTL of 0: a refresh that did not join the request in flight would send its own.
        let resource = fixture.resource(ttl: 0)
        let refreshes = Task {
            await withTaskGroup(of: Int?.self) { group in
                for _ in 0..<20 { group.addTask { await resource.refresh().value?.version } }
                return await group.reduce(into: [Int?]()) { $0.append($1) }
            }
        }
        // Every refresh waits for the one request, which cannot finish before the gate opens.
        #expect(await eventually { resource.callersWaitingForRequest == 20 })
        gate.open(20)  // enough for every refresh, so a failing run ends at once
        #expect(await refreshes.value == Array(repeating: 1, count: 20))
        #expect(fixture.server.requestCount == 1)
        #expect(resource.callersWaitingForRequest == 0)
    }

    @Test func valuesStreamEachNewValueOnce() async throws {
        let fixture = try RemoteFixture { request in
            // Versions 0, 0, 1: the second answer repeats the first body.
            .json(TestConfig.body(request.sequence < 2 ? 0 : 1))
        }
        let resource = fixture.resource(ttl: 0)
        let stream = resource.values()
        let collector = Task { await stream.prefix(2).reduce(into: [Int]()) { $0.append($1.version) } }
        for _ in 0..<3 {
            await resource.refresh()
            fixture.clock.advance(by: 1)
        }
        #expect(await withTimeout(5) { await collector.value } == [0, 1])
        #expect(fixture.server.requestCount == 3)
    }

    @Test func snapshotsReportEveryRefresh() async throws {
        let fixture = try RemoteFixture()
        fixture.server.enqueue(.json(TestConfig.body(1)), .text("no", status: 500))
        let resource = fixture.resource(ttl: 0)
        let stream = resource.snapshots()
        // Each snapshot is yielded before `refresh` returns, so it is there to be read at once.
        await resource.refresh()
        let first = await withTimeout(5) { await stream.first { _ in true } }
        #expect(first??.outcome == .fromNetwork)
        fixture.clock.advance(by: 1)
        await resource.refresh()
        let second = await withTimeout(5) { await stream.first { _ in true } }
        #expect(second??.outcome == .fromStaleCache)
        #expect(second??.lastError?.status == 500)
    }

    @Test func autoRefreshStepsRevalidateOnScheduleAndCoolDown() async throws {
        let fixture = try RemoteFixture()
        fixture.server.enqueue(.json(TestConfig.body(1), headers: ["ETag": "\"v1\""]))
        fixture.server.setHandler { _ in .text("down", status: 503) }
        let resource = fixture.resource(ttl: 3600)
        // Immediately due: nothing held yet.
        let first = await resource.autoRefreshStep(interval: 60)
        #expect(fixture.server.requestCount == 1)
        #expect(first == 60)
        // Not due before the interval, even though the TTL is an hour… and due after it.
        fixture.clock.advance(by: 59)
        _ = await resource.autoRefreshStep(interval: 60)
        #expect(fixture.server.requestCount == 1)
        fixture.clock.advance(by: 1)
        _ = await resource.autoRefreshStep(interval: 60)
        #expect(fixture.server.requestCount == 2)
        #expect(fixture.server.requests[1].headers["If-None-Match"] == "\"v1\"")
        // Failing now: ticks every second for an hour stay within the cool-down's bound.
        for _ in 0..<3600 {
            fixture.clock.advance(by: 1)
            _ = await resource.autoRefreshStep(interval: 60)
        }
        #expect(fixture.server.requestCount <= 25)
        #expect(resource.value?.version == 1)
    }

    @Test func autoRefreshPicksUpANewConfigLive() async throws {
        let version = Locked(1)
        let fixture = try RemoteFixture { _ in .json(TestConfig.body(version.value)) }
        let resource = RemoteResource(
            url: fixture.url,
            cacheDirectory: nil,
            transport: fixture.transport,
            configuration: RemoteResourceConfiguration(
                cacheTTL: 0,
                requestTimeout: 5,
                backoff: Backoff.Policy(initialDelay: 0.01, maximumDelay: 0.01)
            ),
            decodeJSON: { try TestConfig(json: $0) }
        )
        let values = resource.values()
        resource.startAutoRefresh(interval: 0.02)
        defer { resource.stopAutoRefresh() }
        #expect(resource.isAutoRefreshing)
        let first = await withTimeout(60) { await values.first { _ in true } }
        #expect(first??.version == 1)
        version.withLock { $0 = 2 }
        // The consumer switches to the new config without restarting anything.
        let second = await withTimeout(60) { await values.first { _ in true } }
        #expect(second??.version == 2)
        resource.stopAutoRefresh()
        #expect(!resource.isAutoRefreshing)
    }
}
