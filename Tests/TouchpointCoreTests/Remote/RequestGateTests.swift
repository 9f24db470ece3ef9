import Foundation
import Testing
import TouchpointTesting

@testable import TouchpointCore

/// A closed gate (the user opted out) keeps every request of the resources that share it from
/// leaving: refreshes serve what is held, auto-refresh waits, and both resume when it opens.
struct RequestGateTests {
    @Test func aClosedGateServesWhatIsHeldWithoutARequest() async throws {
        let fixture = try RemoteFixture()
        let gate = RequestGate()
        let resource = fixture.resource(ttl: 60, gate: gate)
        fixture.server.enqueue(.json(TestConfig.body(1), headers: ["ETag": "\"v1\""]))
        #expect(await resource.refresh().outcome == .fromNetwork)
        #expect(fixture.server.requestCount == 1)

        gate.close()
        fixture.clock.advance(by: 3600)  // stale: an open gate would revalidate
        let served = await resource.refresh()
        #expect(served.value?.version == 1)
        #expect(await resource.forceRefresh().value?.version == 1)
        #expect(fixture.server.requestCount == 1, "no request while closed, not even a forced one")

        gate.open()
        fixture.server.enqueue(.json(TestConfig.body(2), headers: ["ETag": "\"v2\""]))
        #expect(await resource.refresh().value?.version == 2)
        #expect(fixture.server.requestCount == 2)
    }

    @Test func aClosedGateWithNothingHeldServesNothing() async throws {
        let fixture = try RemoteFixture()
        let resource = fixture.resource(gate: RequestGate(isOpen: false))
        let snapshot = await resource.refresh()
        #expect(snapshot.value == nil)
        #expect(fixture.server.requestCount == 0)
    }

    @Test func autoRefreshWaitsAtAClosedGateAndChecksAtOnceWhenItOpens() async throws {
        let fixture = try RemoteFixture { _ in .json(TestConfig.body(1)) }
        let gate = RequestGate(isOpen: false)
        let resource = fixture.resource(ttl: 0, gate: gate)
        resource.startAutoRefresh(interval: 300)
        defer { resource.stopAutoRefresh() }
        // The schedule checks the gate before any request: it is parked there, having sent none.
        #expect(await eventually { gate.waiting == 1 })
        #expect(fixture.server.requestCount == 0)

        gate.open()
        #expect(await fixture.server.waitForRequests(1, timeout: 30))
        #expect(await eventually { resource.value?.version == 1 })
        #expect(gate.waiting == 0)
    }

    @Test func stoppingAScheduleThatWaitsAtTheGateReleasesIt() async throws {
        let fixture = try RemoteFixture()
        let gate = RequestGate(isOpen: false)
        let resource = fixture.resource(gate: gate)
        resource.startAutoRefresh(interval: 300)
        #expect(await eventually { gate.waiting == 1 })
        resource.stopAutoRefresh()
        #expect(await eventually { gate.waiting == 0 }, "the cancelled schedule left the gate")
        #expect(fixture.server.requestCount == 0)
    }
}
