import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointPromo
import TouchpointTesting

/// The service's maximum and weighted rotation: sticky for a user across launches.
@MainActor
struct PromoServiceRotationTests {
    nonisolated static let weighted = PromoCatalogs.document(
        ["a", "b", "c", "d", "e", "f", "g", "h"].map { PromoCatalogs.app($0, weight: 1) }, maxApps: 3)

    @Test func theCatalogsMaximumAndTheAppsOwnApply() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(.json(PromoCatalogs.document(PromoCatalogs.apps("a", "b", "c", "d"), maxApps: 2)))
        let service = fixture.service()
        await service.loadApps()
        #expect(service.apps.map(\.id) == ["b", "c"])

        let own = fixture.service(fixture.config(maximumApps: 1))
        await own.loadApps()  // from the cache the first service wrote
        #expect(own.apps.map(\.id) == ["b"])
    }

    @Test func aUsersListIsTheSameAfterARelaunch() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(.json(Self.weighted))
        let first = fixture.service(fixture.config(userID: "user-7"))
        await first.loadApps()
        #expect(first.apps.count == 3)
        let expected = PromoSelection(currentAppID: "a", rotationKey: "user-7")
            .apps(from: try PromoCatalog(json: Self.weighted)).map(\.id)
        #expect(first.apps.map(\.id) == expected)

        // Relaunch: the list comes from the cache and is the same.
        fixture.server.stop()
        let relaunched = fixture.service(fixture.config(userID: "user-7"))
        await relaunched.loadApps()
        #expect(relaunched.apps.map(\.id) == expected)
    }

    @Test func withoutAUserIDTheRotationSticksToTheRecordersUserThenItsInstallID() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(.json(Self.weighted))
        let catalog = try PromoCatalog(json: Self.weighted)

        let anonymous = fixture.service()
        await anonymous.loadApps()
        let installID = fixture.recorder.anonymousId
        #expect(anonymous.apps == PromoSelection(currentAppID: "a", rotationKey: installID).apps(from: catalog))

        await fixture.recorder.startSession(userID: "member-99")
        let member = fixture.service()
        await member.loadApps()
        #expect(member.apps == PromoSelection(currentAppID: "a", rotationKey: "member-99").apps(from: catalog))
    }

    @Test func differentUsersSeeDifferentLists() async throws {
        let fixture = try PromoFixture()
        fixture.server.enqueue(.json(Self.weighted))
        var lists: Set<[String]> = []
        for user in 0..<12 {
            let service = fixture.service(fixture.config(userID: "user-\(user)"))
            await service.loadApps()
            lists.insert(service.apps.map(\.id))
        }
        #expect(fixture.server.requestCount == 1, "later services use the fresh cache")
        #expect(lists.count > 3)
    }
}
