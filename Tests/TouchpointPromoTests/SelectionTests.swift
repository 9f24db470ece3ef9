import Foundation
import Testing
import TouchpointCore
import TouchpointPromo
import TouchpointTesting

/// Which apps a list shows: exclusion, rules, catalog order, maximum, weighted sticky rotation.
struct SelectionTests {
    static func catalog(_ apps: [JSONValue], rules: JSONValue? = nil, maxApps: JSONValue? = nil) throws -> PromoCatalog
    {
        try PromoCatalog(json: PromoCatalogs.document(apps, rules: rules, maxApps: maxApps))
    }

    static func ids(_ apps: [PromoApp]) -> [String] { apps.map(\.id) }

    @Test func theCurrentAppIsExcludedAndCatalogOrderKept() throws {
        let catalog = try Self.catalog(PromoCatalogs.apps("d", "a", "c", "b"))
        #expect(Self.ids(PromoSelection(currentAppID: "c").apps(from: catalog)) == ["d", "a", "b"])
        #expect(Self.ids(PromoSelection(currentAppID: "zz").apps(from: catalog)) == ["d", "a", "c", "b"])
    }

    @Test func aRuleShowsOnlyTheListedAppsInCatalogOrder() throws {
        let catalog = try Self.catalog(
            PromoCatalogs.apps("a", "b", "c", "d"),
            rules: ["a": ["d", "b"], "b": ["a"], "c": []]
        )
        #expect(Self.ids(PromoSelection(currentAppID: "a").apps(from: catalog)) == ["b", "d"])
        #expect(Self.ids(PromoSelection(currentAppID: "b").apps(from: catalog)) == ["a"])
        #expect(Self.ids(PromoSelection(currentAppID: "c").apps(from: catalog)).isEmpty)
        // Without a rule: every other app.
        #expect(Self.ids(PromoSelection(currentAppID: "d").apps(from: catalog)) == ["a", "b", "c"])
    }

    @Test func aRuleListingTheCurrentAppStillExcludesIt() throws {
        let catalog = try Self.catalog(PromoCatalogs.apps("a", "b"), rules: ["a": ["a", "b"]])
        #expect(Self.ids(PromoSelection(currentAppID: "a").apps(from: catalog)) == ["b"])
    }

    @Test func unknownAndSkippedIdsInARuleShowNothingForThem() throws {
        let catalog = try Self.catalog(
            [PromoCatalogs.app("a"), PromoCatalogs.app("b", icon: "http://b"), PromoCatalogs.app("c")],
            rules: ["a": ["b", "c", "nope"]]
        )
        #expect(Self.ids(PromoSelection(currentAppID: "a").apps(from: catalog)) == ["c"])
    }

    @Test func withoutWeightsTheMaximumKeepsTheFirstAppsInCatalogOrder() throws {
        let catalog = try Self.catalog(PromoCatalogs.apps("a", "b", "c", "d", "e"), maxApps: 3)
        #expect(Self.ids(PromoSelection(currentAppID: "b").apps(from: catalog)) == ["a", "c", "d"])
        // The app's own maximum overrides the catalog's, both ways.
        #expect(Self.ids(PromoSelection(currentAppID: "b", maximumApps: 1).apps(from: catalog)) == ["a"])
        #expect(
            Self.ids(PromoSelection(currentAppID: "b", maximumApps: 9).apps(from: catalog)) == ["a", "c", "d", "e"])
        #expect(PromoSelection(currentAppID: "b", maximumApps: 0).apps(from: catalog).isEmpty)
        #expect(PromoSelection(currentAppID: "b", maximumApps: -2).apps(from: catalog).isEmpty)
    }

    @Test func theMaximumAppliesAfterTheRules() throws {
        let catalog = try Self.catalog(
            PromoCatalogs.apps("a", "b", "c", "d", "e"), rules: ["a": ["e", "d", "c"]], maxApps: 2)
        #expect(Self.ids(PromoSelection(currentAppID: "a").apps(from: catalog)) == ["c", "d"])
    }

    static func weighted(_ weights: [(String, JSONValue?)]) -> [JSONValue] {
        weights.map { PromoCatalogs.app($0.0, weight: $0.1) }
    }

    @Test func theRotationIsStickyPerUserAndKeepsCatalogOrder() throws {
        let catalog = try Self.catalog(
            Self.weighted([("a", 1), ("b", 1), ("c", 1), ("d", 1), ("e", 1), ("f", 1), ("g", 1)]), maxApps: 3)
        var seen: Set<[String]> = []
        for user in (0..<40).map({ "user-\($0)" }) {
            let selection = PromoSelection(currentAppID: "a", rotationKey: user)
            let first = Self.ids(selection.apps(from: catalog))
            #expect(first.count == 3)
            #expect(!first.contains("a"))
            #expect(first == first.sorted(), "catalog order")
            // The same user, a new process, a new catalog value: the same apps.
            let again = try Self.catalog(
                Self.weighted([("a", 1), ("b", 1), ("c", 1), ("d", 1), ("e", 1), ("f", 1), ("g", 1)]), maxApps: 3)
            #expect(Self.ids(PromoSelection(currentAppID: "a", rotationKey: user).apps(from: again)) == first)
            seen.insert(first)
        }
        // Different users see different lists: it rotates.
        #expect(seen.count >= 10)
    }

    /// The choice for a fixed user is pinned: `StableHash` is the same in every process and on
    /// every platform, so this must never change between releases or launches.
    @Test func theRotationForAGivenUserIsPinned() throws {
        let catalog = try Self.catalog(
            Self.weighted([("a", 1), ("b", 1), ("c", 1), ("d", 1), ("e", 1), ("f", 1)]), maxApps: 2)
        let chosen = Self.ids(PromoSelection(currentAppID: "a", rotationKey: "user-42").apps(from: catalog))
        let scores = ["b", "c", "d", "e", "f"].map { id in
            (id, StableHash.unitInterval("user-42\u{1F}a\u{1F}" + id))
        }
        // With equal weights the two highest hash values win.
        let expected = scores.sorted { $0.1 > $1.1 }.prefix(2).map(\.0).sorted()
        #expect(chosen == expected)
    }

    @Test func addingAnAppDoesNotReshuffleTheOthers() throws {
        let before = try Self.catalog(Self.weighted([("a", 1), ("b", 1), ("c", 1), ("d", 1), ("e", 1)]), maxApps: 2)
        let after = try Self.catalog(
            Self.weighted([("a", 1), ("b", 1), ("c", 1), ("d", 1), ("e", 1), ("new", 0)]), maxApps: 2)
        for user in (0..<50).map({ "u\($0)" }) {
            let selection = PromoSelection(currentAppID: "a", rotationKey: user)
            #expect(Self.ids(selection.apps(from: before)) == Self.ids(selection.apps(from: after)))
        }
    }

    @Test func heavierAppsWinMoreOften() throws {
        let catalog = try Self.catalog(
            Self.weighted([("home", 1), ("heavy", 4), ("light", 1), ("lighter", 1)]), maxApps: 1)
        var wins: [String: Int] = [:]
        for user in 0..<3000 {
            let chosen = PromoSelection(currentAppID: "home", rotationKey: "user-\(user)").apps(from: catalog)
            wins[chosen[0].id, default: 0] += 1
        }
        // Deterministic (the keys are fixed); expected shares are 4/6 and 1/6 each.
        let heavy = Double(wins["heavy"] ?? 0) / 3000
        #expect(heavy > 0.6 && heavy < 0.73, "heavy won \(heavy)")
        for light in ["light", "lighter"] {
            let share = Double(wins[light] ?? 0) / 3000
            #expect(share > 0.12 && share < 0.21, "\(light) won \(share)")
        }
    }

    @Test func weightZeroOnlyFillsPlacesNothingElseCan() throws {
        let catalog = try Self.catalog(Self.weighted([("a", 1), ("paused", 0), ("b", 1), ("c", 1)]), maxApps: 2)
        for user in (0..<50).map({ "u\($0)" }) {
            let chosen = Self.ids(PromoSelection(currentAppID: "a", rotationKey: user).apps(from: catalog))
            #expect(chosen == ["b", "c"])
        }
        let roomy = try Self.catalog(Self.weighted([("a", 1), ("paused", 0), ("b", 1)]), maxApps: 2)
        #expect(Self.ids(PromoSelection(currentAppID: "a", rotationKey: "u").apps(from: roomy)) == ["paused", "b"])
    }

    @Test func anAppWithoutAWeightCountsAsOneOnceAnyAppHasOne() throws {
        let catalog = try Self.catalog(
            Self.weighted([("a", nil), ("b", nil), ("c", 1), ("d", nil), ("e", nil)]), maxApps: 2)
        var chosenSets: Set<[String]> = []
        for user in (0..<60).map({ "u\($0)" }) {
            chosenSets.insert(Self.ids(PromoSelection(currentAppID: "a", rotationKey: user).apps(from: catalog)))
        }
        #expect(chosenSets.count > 1, "weights opt into rotation")
        #expect(chosenSets.contains { $0.contains("d") || $0.contains("e") })
    }

    @Test func theRotationVariesWithThePromotingApp() throws {
        let catalog = try Self.catalog(
            Self.weighted([("a", 1), ("b", 1), ("c", 1), ("d", 1), ("e", 1), ("f", 1)]), maxApps: 2)
        var differing = 0
        for user in (0..<30).map({ "u\($0)" }) {
            let fromA = Set(Self.ids(PromoSelection(currentAppID: "a", rotationKey: user).apps(from: catalog)))
                .subtracting(["b"])
            let fromB = Set(Self.ids(PromoSelection(currentAppID: "b", rotationKey: user).apps(from: catalog)))
                .subtracting(["a"])
            if fromA != fromB { differing += 1 }
        }
        #expect(differing > 0)
    }

    @Test func rotationChoosesNothingOrEverythingAtTheEdges() {
        let apps = (0..<3).map {
            PromoApp(
                id: "x\($0)", name: "X", appStoreID: "1", iconURL: URL(string: "https://x/y")!, category: "c",
                tagline: ["en": "t"], weight: 1)
        }
        #expect(PromoRotation.choose(0, from: apps, key: "k").isEmpty)
        #expect(PromoRotation.choose(3, from: apps, key: "k") == apps)
        #expect(PromoRotation.choose(7, from: apps, key: "k") == apps)
        #expect(PromoRotation.choose(2, from: apps, key: "k").count == 2)
    }
}
