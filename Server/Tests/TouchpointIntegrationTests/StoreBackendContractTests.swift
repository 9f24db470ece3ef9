import Testing
import TouchpointCore
import TouchpointStore

/// The ``StoreBackendAdapter`` contract, run against the in-memory backend and against the HTTP
/// backend talking to a real collector: what one does, the other does.
struct StoreBackendContractTests {
    @Test(arguments: BackendKind.allCases)
    func anAbsentDocumentPullsAsNilAndIfAbsentCreatesIt(kind: BackendKind) async throws {
        try await kind.run { backend async throws in
            #expect(try await backend.pull(namespace: "n", scenarioID: "s") == nil)
            let etag = try await backend.push(
                ["count": 1, "title": "x"], namespace: "n", scenarioID: "s", precondition: .ifAbsent)
            #expect(!etag.isEmpty)
            #expect(
                try await backend.pull(namespace: "n", scenarioID: "s")
                    == StoreBackendDocument(values: ["count": 1, "title": "x"], etag: etag))
        }
    }

    @Test(arguments: BackendKind.allCases)
    func aPushWithTheCurrentETagReplacesTheWholeDocumentAndChangesTheETag(kind: BackendKind) async throws {
        try await kind.run { backend async throws in
            let first = try await backend.push(
                ["a": 1, "b": 2], namespace: "n", scenarioID: "s", precondition: .ifAbsent)
            let second = try await backend.push(
                ["a": 3], namespace: "n", scenarioID: "s", precondition: .ifMatch(first))
            #expect(second != first)
            // The push replaces: `b` is gone, not merged.
            #expect(
                try await backend.pull(namespace: "n", scenarioID: "s")
                    == StoreBackendDocument(values: ["a": 3], etag: second))
            // The same values again still count as a write: a new ETag.
            let third = try await backend.push(
                ["a": 3], namespace: "n", scenarioID: "s", precondition: .ifMatch(second))
            #expect(Set([first, second, third]).count == 3)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func aStalePushIsAConflictThatNamesTheServersETagAndChangesNothing(kind: BackendKind) async throws {
        try await kind.run { backend async throws in
            let first = try await backend.push(["v": 1], namespace: "n", scenarioID: "s", precondition: .ifAbsent)
            let second = try await backend.push(
                ["v": 2], namespace: "n", scenarioID: "s", precondition: .ifMatch(first))

            let stale = await expectStoreError(.conflict) {
                try await backend.push(["v": 3], namespace: "n", scenarioID: "s", precondition: .ifMatch(first))
            }
            #expect(stale?.message.contains(second) == true, "\(String(describing: stale))")
            #expect(stale?.keyPath == "n/s")

            let exists = await expectStoreError(.conflict) {
                try await backend.push(["v": 4], namespace: "n", scenarioID: "s", precondition: .ifAbsent)
            }
            #expect(exists?.message.contains(second) == true, "\(String(describing: exists))")

            _ = await expectStoreError(.conflict) {
                try await backend.push(["v": 5], namespace: "n", scenarioID: "s", precondition: .ifMatch("\"999\""))
            }
            #expect(
                try await backend.pull(namespace: "n", scenarioID: "s")
                    == StoreBackendDocument(values: ["v": 2], etag: second))
        }
    }

    @Test(arguments: BackendKind.allCases)
    func anIfMatchPushToAnAbsentDocumentIsAConflictAndCreatesNothing(kind: BackendKind) async throws {
        try await kind.run { backend async throws in
            let absent = await expectStoreError(.conflict) {
                try await backend.push(["v": 1], namespace: "n", scenarioID: "s", precondition: .ifMatch("\"1\""))
            }
            #expect(absent?.message.contains("no document") == true, "\(String(describing: absent))")
            #expect(try await backend.pull(namespace: "n", scenarioID: "s") == nil)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func documentsAreKeptApartByNamespaceAndScenarioIDWithNilAsItsOwnDocument(kind: BackendKind) async throws {
        try await kind.run { backend async throws in
            let scopes: [(String, String?)] = [("n", "s"), ("n", nil), ("m", "s"), ("m", nil), ("n", "S"), ("n", "t")]
            for (index, (namespace, scenarioID)) in scopes.enumerated() {
                _ = try await backend.push(
                    ["index": .integer(index)], namespace: namespace, scenarioID: scenarioID, precondition: .ifAbsent)
            }
            for (index, (namespace, scenarioID)) in scopes.enumerated() {
                let document = try await backend.pull(namespace: namespace, scenarioID: scenarioID)
                #expect(document?.values == ["index": .integer(index)], "\(namespace)/\(scenarioID ?? "nil")")
            }
            #expect(try await backend.pull(namespace: "other", scenarioID: nil) == nil)
        }
    }

    /// Names that URLs treat specially: each must still be a document of its own.
    static let awkwardNames = [
        "a b", "a%20b", "a/b", "a?b", "a#b", "a+b", "..", ".", "...", "ünïcødé", "emoji 🛒", "a;b=c", "%", "~x_y.z",
    ]

    @Test(arguments: BackendKind.allCases)
    func namesWithSpacesSlashesDotsAndNonASCIIAreDocumentsOfTheirOwn(kind: BackendKind) async throws {
        try await kind.run { backend async throws in
            for (index, name) in Self.awkwardNames.enumerated() {
                _ = try await backend.push(
                    ["index": .integer(index)], namespace: name, scenarioID: name, precondition: .ifAbsent)
                _ = try await backend.push(
                    ["index": .integer(-index)], namespace: "plain", scenarioID: name, precondition: .ifAbsent)
            }
            for (index, name) in Self.awkwardNames.enumerated() {
                #expect(
                    try await backend.pull(namespace: name, scenarioID: name)?.values == ["index": .integer(index)],
                    "\(name)")
                #expect(
                    try await backend.pull(namespace: "plain", scenarioID: name)?.values == ["index": .integer(-index)],
                    "\(name)")
            }
        }
    }

    /// One value of every kind, including the ones plain JSON would turn into something else.
    static let everyKind: [String: StoreValue] = [
        "string": "text with \"quotes\" and ünïcødé",
        "integer": 42,
        "negative": -7,
        "fraction": 1.5,
        "wholeDouble": .number(2),
        "infinity": .number(.infinity),
        "bool": true,
        "color": .color("#FF8800"),
        "url": .url("https://shop.example/cart?x=1"),
        "null": .null,
        "array": [1, "two", .number(3), .color("#000000"), [true]],
        "object": ["nested": ["deeper": .url("https://a.example")]],
        "taggedLookalike": .object(["$url": "not a url case"]),
        "emptyObject": .object([:]),
        "emptyArray": .array([]),
        "key.with.dots": "dots in a top-level key",
    ]

    @Test(arguments: BackendKind.allCases)
    func everyKindOfValueComesBackAsItself(kind: BackendKind) async throws {
        try await kind.run { backend async throws in
            let etag = try await backend.push(Self.everyKind, namespace: "n", scenarioID: nil, precondition: .ifAbsent)
            let document = try #require(try await backend.pull(namespace: "n", scenarioID: nil))
            #expect(document.etag == etag)
            for (key, value) in Self.everyKind {
                #expect(document.values[key] == value, "\(key)")
                #expect(document.values[key]?.kindName == value.kindName, "\(key)")
            }
            #expect(document.values.count == Self.everyKind.count)
        }
    }

    @Test(arguments: BackendKind.allCases)
    func concurrentPushesFromOneETagLetExactlyOneWin(kind: BackendKind) async throws {
        try await kind.run { backend async throws in
            let first = try await backend.push(["writer": -1], namespace: "n", scenarioID: "s", precondition: .ifAbsent)
            let results = await withTaskGroup(of: (Int, Result<String, any Error>).self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        do {
                            let etag = try await backend.push(
                                ["writer": .integer(writer)], namespace: "n", scenarioID: "s",
                                precondition: .ifMatch(first))
                            return (writer, .success(etag))
                        } catch {
                            return (writer, .failure(error))
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let winners = results.compactMap { writer, result in (try? result.get()).map { (writer, $0) } }
            #expect(winners.count == 1)
            for case (_, .failure(let error)) in results {
                #expect((error as? StoreError)?.code == .conflict, "\(error)")
            }
            let winner = try #require(winners.first)
            #expect(
                try await backend.pull(namespace: "n", scenarioID: "s")
                    == StoreBackendDocument(values: ["writer": .integer(winner.0)], etag: winner.1))
        }
    }

    @Test(arguments: BackendKind.allCases)
    func twoDevicesSyncingOneScenarioNeverOverwriteEachOther(kind: BackendKind) async throws {
        try await kind.run { backend async throws in
            let phone = DefaultStore(appID: "app", configuration: .init(backend: backend))
            let tablet = DefaultStore(appID: "app", configuration: .init(backend: backend))
            let phoneSync = phone.backendSync(namespace: "acme", scenarioID: "checkout")
            let tabletSync = tablet.backendSync(namespace: "acme", scenarioID: "checkout")

            #expect(try await phoneSync.pull() == false)
            phoneSync.store.set("cart.coupon", "SPRING")
            phoneSync.store.set("cart.color", .color("#00FF00"))
            try await phoneSync.push()

            #expect(try await tabletSync.pull())
            #expect(tabletSync.store.get("cart.coupon") == "SPRING")
            #expect(tabletSync.store.get("cart.color") == .color("#00FF00"))
            tabletSync.store.set("cart.coupon", "SUMMER")
            try await tabletSync.push()

            // The phone's copy is stale: a conflict, and the server keeps the tablet's value.
            phoneSync.store.set("cart.coupon", "WINTER")
            do {
                try await phoneSync.push()
                Issue.record("expected a conflict")
            } catch {
                #expect((error as? StoreError)?.code == .conflict, "\(error)")
            }
            #expect(
                try await backend.pull(namespace: "acme", scenarioID: "checkout")?.values["cart"]?.objectValue?[
                    "coupon"]
                    == "SUMMER")
            #expect(phoneSync.store.get("cart.coupon") == "WINTER")  // the local edit is kept

            // Pull, re-apply, push: now it goes through, and the tablet sees it.
            try await phoneSync.pull()
            phoneSync.store.set("cart.coupon", "WINTER")
            try await phoneSync.push()
            #expect(try await tabletSync.pull())
            #expect(tabletSync.store.get("cart.coupon") == "WINTER")
            #expect(await tabletSync.etag == (await phoneSync.etag))
        }
    }
}
