import Foundation
import InMemoryLogging
import Logging
import Observation
import Testing
import TouchpointTesting

@testable import TouchpointCore
@testable import TouchpointPromo

/// Loading through the shared `RemoteResource` against a real server on 127.0.0.1:
/// network → cache → empty state.
@MainActor
struct PromoServiceLoadingTests {
    nonisolated static let catalog = PromoCatalogs.document(PromoCatalogs.apps("a", "b", "c"))

    @Test func aCatalogFromTheNetworkIsListedAndCached() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(.json(Self.catalog, headers: ["ETag": "\"v1\""]))
        let service = fixture.service()
        #expect(service.apps.isEmpty && !service.isLoading && service.outcome == nil)

        await service.loadApps()
        #expect(service.apps.map(\.id) == ["b", "c"])
        #expect(service.outcome == .fromNetwork)
        #expect(service.error == nil)
        #expect(service.problems.isEmpty)
        #expect(!service.isLoading)
        #expect(fixture.server.requests.map(\.path) == ["/apps.json"])
        // The cache lives under the recorder's directory, named after the URL.
        let name = "promo-catalog-" + StableHash.hex(of: fixture.catalogURL.absoluteString) + ".cache"
        #expect(fixture.cacheFiles == [name])
    }

    @Test func a304KeepsTheListAndSendsTheETag() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(
            .json(Self.catalog, headers: ["ETag": "\"v1\""]),
            TestHTTPResponse(status: 304, headers: ["ETag": "\"v1\""]))
        let service = fixture.service(fixture.config(ttl: 60))
        await service.loadApps()
        fixture.clock.advance(by: 61)
        await service.loadApps()
        #expect(service.outcome == .notModified)
        #expect(service.apps.map(\.id) == ["b", "c"])
        #expect(service.error == nil)
        #expect(fixture.server.requests.count == 2)
        #expect(fixture.server.requests[1].headers["If-None-Match"] == "\"v1\"")
    }

    @Test func loadAppsRespectsTheTTLAndForceRefreshBypassesIt() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(
            .json(Self.catalog, headers: ["ETag": "\"v1\""]),
            .json(PromoCatalogs.document(PromoCatalogs.apps("a", "d")), headers: ["ETag": "\"v2\""]))
        let service = fixture.service(fixture.config(ttl: 600))
        await service.loadApps()
        fixture.clock.advance(by: 10)
        await service.loadApps()
        #expect(service.outcome == .fromFreshCache)
        #expect(fixture.server.requestCount == 1)

        await service.forceRefresh()
        #expect(fixture.server.requestCount == 2)
        #expect(service.outcome == .fromNetwork)
        #expect(service.apps.map(\.id) == ["d"])
    }

    @Test func aFailureWithoutACacheShowsTheEmptyStateWithAnError() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(.text("down for maintenance", status: 503))
        let service = fixture.service()
        await service.loadApps()
        #expect(service.apps.isEmpty)
        #expect(service.outcome == .noValue)
        #expect(service.error?.code == .unreachable)
        #expect(service.error?.underlying?.status == 503)
        #expect(!service.isLoading)
    }

    @Test func anUnreachableServerWithoutACacheShowsTheEmptyState() async throws {
        let fixture = try PromoFixture()
        fixture.server.stop()
        let service = fixture.service()
        await service.loadApps()
        #expect(service.apps.isEmpty)
        #expect(service.error?.code == .unreachable)
        #expect(service.error?.underlying?.code == .transport)
    }

    /// A new launch (a new service over the same directory) whose network fails shows the cache.
    @Test(arguments: [false, true])
    func aFailureAfterARelaunchShowsTheStaleCache(serverDown: Bool) async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(.json(Self.catalog, headers: ["ETag": "\"v1\""]))
        await fixture.service(fixture.config(ttl: 60)).loadApps()

        fixture.clock.advance(by: 3600)
        if serverDown { fixture.server.stop() } else { fixture.server.enqueue(.text("boom", status: 500)) }
        let relaunched = fixture.service(fixture.config(ttl: 60))
        await relaunched.loadApps()
        #expect(relaunched.apps.map(\.id) == ["b", "c"])
        #expect(relaunched.outcome == .fromStaleCache)
        #expect(relaunched.error?.code == .unreachable)

        // Pull to refresh while it is still failing keeps the list.
        await relaunched.forceRefresh()
        #expect(relaunched.apps.map(\.id) == ["b", "c"])
        #expect(relaunched.error != nil)
    }

    @Test func theCachedListShowsWhileTheNetworkIsAsked() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(.json(Self.catalog, headers: ["ETag": "\"v1\""]))
        await fixture.service(fixture.config(ttl: 60)).loadApps()

        let gate = Gate()
        fixture.server.setHandler { _ in
            await gate.pass()  // the answer waits until the test has looked
            return .json(PromoCatalogs.document(PromoCatalogs.apps("a", "b", "c", "d")), headers: ["ETag": "\"v2\""])
        }
        fixture.clock.advance(by: 3600)
        let relaunched = fixture.service(fixture.config(ttl: 60))
        let load = Task { await relaunched.loadApps() }
        #expect(await fixture.server.waitForRequests(2))
        #expect(relaunched.isLoading)
        #expect(relaunched.apps.map(\.id) == ["b", "c"])
        gate.open()
        _ = await withTimeout(10) { await load.value }
        #expect(!relaunched.isLoading)
        #expect(relaunched.apps.map(\.id) == ["b", "c", "d"])
        #expect(relaunched.outcome == .fromNetwork)
    }

    @Test func garbageFromTheServerIsRejectedAndTheLastGoodListKept() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(
            .text("<html>oops</html>"),
            .json(Self.catalog, headers: ["ETag": "\"v1\""]),
            .json(["apps": "none"]))
        let service = fixture.service(fixture.config(ttl: 60))

        await service.loadApps()
        #expect(service.apps.isEmpty)
        #expect(service.error?.code == .invalidCatalog)
        #expect(fixture.cacheFiles.isEmpty, "a rejected body is never cached")

        await service.forceRefresh()
        #expect(service.apps.map(\.id) == ["b", "c"])
        #expect(service.error == nil)
        let cached = try #require(fixture.cacheFiles.first)
        let cacheBefore = try AtomicFile.read(fixture.directory.path + "/cache/" + cached)

        await service.forceRefresh()
        #expect(service.apps.map(\.id) == ["b", "c"])
        #expect(service.outcome == .fromStaleCache)
        #expect(service.error?.code == .invalidCatalog)
        #expect(service.error?.message.contains("apps: expected an array, got string") == true)
        #expect(try AtomicFile.read(fixture.directory.path + "/cache/" + cached) == cacheBefore)
    }

    @Test func brokenEntriesAreSkippedLoggedAndListedWhileTheRestShows() async throws {
        let fixture = try PromoFixture()
        let json = PromoCatalogs.document([
            PromoCatalogs.app("a"), PromoCatalogs.app("b", icon: "http://cdn.example.com/b.png"),
            PromoCatalogs.app("c"),
        ])
        fixture.server.enqueue(.json(json), .json(json))
        let service = fixture.service(fixture.config(ttl: 60))
        await service.loadApps()
        #expect(service.apps.map(\.id) == ["c"])
        #expect(service.problems.map(\.description) == ["apps[1].iconURL: must be an https URL"])
        #expect(service.error == nil)

        let warnings = fixture.logs.entries.filter { $0.level == .warning }
        #expect(warnings.count == 1)
        #expect(warnings.first?.metadata["problem"]?.description == "apps[1].iconURL: must be an https URL")

        // The same problems again are not logged again.
        fixture.clock.advance(by: 61)
        await service.loadApps()
        #expect(fixture.logs.entries.filter { $0.level == .warning }.count == 1)
    }

    @Test func theListIsObservable() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(.json(Self.catalog))
        let service = fixture.service()
        let changed = Locked<[String]>([])
        withObservationTracking {
            _ = service.apps
        } onChange: {
            changed.withLock { $0.append("apps") }
        }
        withObservationTracking {
            _ = service.isLoading
        } onChange: {
            changed.withLock { $0.append("isLoading") }
        }
        await service.loadApps()
        #expect(changed.value.sorted() == ["apps", "isLoading"])
    }

    @Test func concurrentLoadsShareOneRequest() async throws {
        let fixture = try PromoFixture()
        let gate = Gate()
        fixture.server.setHandler { _ in
            await gate.pass()  // the answer waits until both loads wait for it
            return .json(Self.catalog)
        }
        let service = fixture.service()
        let resource = try #require(service.resource)
        let load = Task { await service.loadApps() }
        let refresh = Task { await service.forceRefresh() }
        #expect(await eventually { @Sendable in resource.callersWaitingForRequest == 2 })
        #expect(service.isLoading)
        gate.open(2)  // enough for both, so a failing run ends at once
        await load.value
        await refresh.value
        #expect(fixture.server.requestCount == 1)
        #expect(!service.isLoading)
        #expect(service.apps.map(\.id) == ["b", "c"])
    }

    @Test func taglinesFollowTheConfiguredLocale() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(.text(PromoCatalogs.seedQuickStart, headers: ["Content-Type": "application/json"]))
        let service = fixture.service(fixture.config(currentAppID: "myapp1", locale: "ko-KR"))
        await service.loadApps()
        #expect(service.locale == "ko-KR")
        #expect(service.apps.map { service.tagline(for: $0) } == ["재정을 관리하세요"])
    }

    /// One test, because the default URL is process-wide state (TouchpointSDK.start sets it too:
    /// ``ProcessDefaults`` runs such tests one at a time).
    @Test func theDefaultCatalogURLIsSetOnceAtLaunch() async throws {
        try await ProcessDefaults.exclusively {
            let fixture = try PromoFixture()
            fixture.server.enqueue(.json(Self.catalog))
            PromoConfig.defaultCatalogURL = nil
            let unconfigured = PromoConfig(currentAppID: "a")
            #expect(!unconfigured.isCatalogURLSet)
            let service = fixture.service(unconfigured)
            await service.loadApps()
            #expect(service.error?.code == .notConfigured)
            #expect(service.error?.message.contains("PromoConfig.defaultCatalogURL") == true)
            #expect(service.apps.isEmpty && !service.isLoading)
            #expect(fixture.server.requestCount == 0)
            #expect(fixture.logs.entries.contains { $0.level == .error })

            PromoConfig.defaultCatalogURL = fixture.catalogURL
            defer { PromoConfig.defaultCatalogURL = nil }
            let configured = PromoConfig(currentAppID: "a")
            #expect(configured.jsonURL == fixture.catalogURL)
            let working = fixture.service(configured)
            await working.loadApps()
            #expect(working.apps.map(\.id) == ["b", "c"])
        }
    }

    @Test func aCatalogURLThatIsNotHTTPIsAConfigurationError() async throws {
        let fixture = try PromoFixture()
        var config = fixture.config()
        config.jsonURL = URL(fileURLWithPath: "/tmp/apps.json")
        let service = fixture.service(config)
        await service.loadApps()
        #expect(service.error?.code == .notConfigured)
        #expect(service.error?.message.contains("must be http or https") == true)
    }

    @Test func theDisplayStateFollowsTheLoad() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(
            .text("nope", status: 500),
            .json(PromoCatalogs.document(PromoCatalogs.apps("a", "b"), rules: ["a": []])),
            .json(Self.catalog),
            .text("nope", status: 500))
        let service = fixture.service()
        #expect(service.displayState == .loading, "before the first load")
        await service.loadApps()
        guard case .error(let error) = service.displayState else {
            Issue.record("expected the error state, got \(service.displayState)")
            return
        }
        #expect(error.code == .unreachable)
        await service.forceRefresh()
        #expect(service.displayState == .empty, "the rule lists nothing for a")
        await service.forceRefresh()
        #expect(service.displayState == .loaded)
        await service.forceRefresh()
        #expect(service.displayState == .loaded, "stale rows still show")
        #expect(service.error != nil)
    }

    @Test func aReloadThatChangesNothingDoesNotRedrawTheList() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(.json(Self.catalog))
        let service = fixture.service(fixture.config(ttl: 600))
        await service.loadApps()
        await service.loadApps()
        #expect(service.outcome == .fromFreshCache)
        let changed = Locked(false)
        withObservationTracking {
            _ = (service.apps, service.outcome, service.error, service.problems)
        } onChange: {
            changed.withLock { $0 = true }
        }
        // A fresh cache again: what every row's task does when the row appears.
        fixture.clock.advance(by: 1)
        await service.loadApps()
        #expect(fixture.server.requestCount == 1)
        #expect(!changed.value)
    }
}
