import Testing
import TouchpointStore

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

struct LiveExpressionTests {
    private func sum(_ id: String, _ output: String, _ inputs: [String], runs: Recorder<String>? = nil)
        -> LiveExpression
    {
        LiveExpression(id: id, outputKeyPath: output, dependsOn: Set(inputs)) { get in
            runs?.append(id)
            return .number(inputs.compactMap { get($0)?.doubleValue }.reduce(0, +))
        }
    }

    @Test func recomputesWhenADependencyChangesAndOnlyThen() {
        let store = DefaultStore(appID: "expr").named(.appMemory)
        let runs = Recorder<String>()
        store.set("a", 1)
        store.registerLiveExpression(sum("ab", "total", ["a", "b"], runs: runs))
        #expect(store.get("total") == 1.0)
        store.set("b", 2)
        #expect(store.get("total") == 3.0)
        store.set("unrelated", 5)
        store.set("a", 1)  // same value: no change at all
        #expect(runs.values.count == 2)
        store.remove("a")
        #expect(store.get("total") == 2.0)
    }

    @Test func wildcardDependenciesSeeEveryElement() {
        let store = DefaultStore(appID: "expr").named(.appMemory)
        store.registerLiveExpression(
            .init(id: "count-selected", outputKeyPath: "selectedCount", dependsOn: ["items[*].selected"]) { get in
                .integer(get("items[*].selected")?.arrayValue?.filter { $0 == true }.count ?? 0)
            })
        store.set("items", [["selected": true], ["selected": false]])
        #expect(store.get("selectedCount") == 1)
        store.set("items[1].selected", true)
        #expect(store.get("selectedCount") == 2)
        store.set("items[2]", ["selected": true])
        #expect(store.get("selectedCount") == 3)
        store.remove("items[0]")
        #expect(store.get("selectedCount") == 2)
    }

    /// A diamond: b and c depend on a, d depends on b and c. d runs once per change, after both,
    /// and subscribers never see d computed from a half-updated state.
    @Test func diamondIsGlitchFree() {
        let store = DefaultStore(appID: "expr").named(.appMemory)
        let runs = Recorder<String>()
        let seenByD = Recorder<[StoreValue?]>()
        store.set("a", 1)
        // Registered out of order on purpose: d first.
        store.registerLiveExpression(
            .init(id: "d", outputKeyPath: "d", dependsOn: ["b", "c"]) { get in
                runs.append("d")
                seenByD.append([get("a"), get("b"), get("c")])
                return .number((get("b")?.doubleValue ?? 0) + (get("c")?.doubleValue ?? 0))
            })
        store.registerLiveExpression(
            .init(id: "b", outputKeyPath: "b", dependsOn: ["a"]) { get in
                runs.append("b")
                return .number((get("a")?.doubleValue ?? 0) * 10)
            })
        store.registerLiveExpression(
            .init(id: "c", outputKeyPath: "c", dependsOn: ["a"]) { get in
                runs.append("c")
                return .number((get("a")?.doubleValue ?? 0) * 100)
            })
        #expect(store.get("d") == 110.0)
        let seen = Recorder<StoreValue?>()
        let cancellable = store.publisher(for: "$").sink { root in
            // Every state a subscriber sees is consistent: d = 10a + 100a.
            if case .object(let members)? = root, let a = members["a"]?.doubleValue {
                seen.append(members["d"])
                #expect(members["d"]?.doubleValue == a * 110)
            }
        }
        defer { cancellable.cancel() }
        let before = runs.values.count
        store.set("a", 2)
        let during = Array(runs.values.dropFirst(before))
        #expect(during.count == 3)
        #expect(during.last == "d")
        #expect(Set(during) == ["b", "c", "d"])
        #expect(seenByD.values.last == [2, 20.0, 200.0])
        #expect(store.get("d") == 220.0)
        #expect(seen.values == [110.0, 220.0])
    }

    @Test func cyclesAreRejectedAtRegistrationNamingTheLoop() {
        let store = DefaultStore(appID: "expr").named(.appMemory)
        #expect(store.registerLiveExpression(sum("x", "x", ["y"])) == .ok)
        #expect(store.registerLiveExpression(sum("y", "y", ["z"])) == .ok)
        let result = store.registerLiveExpression(sum("z", "z", ["x"]))
        #expect(result == .failed(reason: "z: live expressions form a cycle: z → y → x → z"))
        // Through a wildcard and a parent path too.
        #expect(store.registerLiveExpression(sum("self", "list[0].total", ["list[*].total"])) != .ok)
        #expect(store.registerLiveExpression(sum("parent", "cart.total", ["cart"])) != .ok)
        // The rejected expression is not registered: z still does nothing.
        store.set("x", 5)
        #expect(store.get("z") == nil)
        // Two expressions may not write the same place.
        #expect(
            store.registerLiveExpression(sum("x2", "x", ["w"]))
                == .failed(reason: "x: live expressions x and x2 both write here (x and x)"))
    }

    @Test func replacingAnExpressionByIDAndUnregistering() {
        let store = DefaultStore(appID: "expr").named(.appMemory)
        store.set("a", 2)
        store.registerLiveExpression(sum("e", "out", ["a"]))
        store.registerLiveExpression(
            .init(id: "e", outputKeyPath: "out", dependsOn: ["a"]) { get in .number((get("a")?.doubleValue ?? 0) * 2) })
        #expect(store.get("out") == 4.0)
        store.unregisterLiveExpression(id: "e")
        store.set("a", 3)
        #expect(store.get("out") == 4.0)
    }

    @Test func alwaysWriteRecordsAPatchEvenWhenTheValueIsTheSame() throws {
        let store = DefaultStore(appID: "expr").scoped(.appMemory)
        store.registerLiveExpression(
            .init(
                id: "flag", outputKeyPath: "flag", dependsOn: ["input"], compute: { _ in .bool(true) },
                policy: .alwaysWrite))
        store.registerLiveExpression(
            .init(id: "quiet", outputKeyPath: "quiet", dependsOn: ["input"], compute: { _ in .bool(true) }))
        let changes = Recorder<StoreChange>()
        let flags = Recorder<StoreValue?>()
        let c1 = store.changesPublisher.sink { changes.append($0) }
        let c2 = store.publisher(for: "flag").sink { flags.append($0) }
        defer {
            c1.cancel()
            c2.cancel()
        }
        store.set("input", 1)
        let change = try #require(changes.values.first)
        #expect(change.patches.map(\.keyPath) == ["input", "flag"])
        #expect(flags.values == [true])  // the value did not change, so subscribers hear nothing
    }

    @Test func aNilResultRemovesTheOutput() {
        let store = DefaultStore(appID: "expr").named(.appMemory)
        store.registerLiveExpression(
            .init(id: "echo", outputKeyPath: "echo", dependsOn: ["source"]) { get in get("source") })
        store.set("source", "x")
        #expect(store.get("echo") == "x")
        store.remove("source")
        #expect(store.exists("echo") == false)
    }

    @Test func computeMayReadTheStoreButNotWriteIt() {
        let store = DefaultStore(appID: "expr").named(.appMemory)
        let attempts = Recorder<ValidationResult>()
        store.registerLiveExpression(
            .init(id: "sneaky", outputKeyPath: "out", dependsOn: ["in"]) { _ in
                attempts.append(store.set("elsewhere", 1))  // refused, no deadlock
                return store.get("in")  // reads through the store work
            })
        store.set("in", 7)
        #expect(store.get("out") == 7)
        #expect(store.exists("elsewhere") == false)
        #expect(
            attempts.values.last
                == .failed(reason: "a live expression's compute cannot write to the store; return the value instead"))
    }

    @Test func outputsAreValidatedAndAFailingOutputDoesNotUndoTheWrite() {
        let store = DefaultStore(appID: "expr").named(.appMemory)
        store.configureValidation(.init(mode: .strict, schema: ["total": Rule(kind: .number, max: 100)]))
        store.registerLiveExpression(sum("total", "total", ["a"]))
        store.set("a", 50)
        #expect(store.get("total") == 50.0)
        #expect(store.set("a", 500) == .ok)
        #expect(store.get("a") == 500)
        #expect(store.get("total") == 50.0)
    }

    /// The registration check cannot see every loop: here a lenient fix of a parent value (not a
    /// declared output) changes an input of an expression that already ran. The runtime guard
    /// stops it from running twice and reports it.
    @Test func runtimeGuardStopsALoopTheRegistrationCheckCouldNotSee() throws {
        let problems = Recorder<StoreError>()
        let store = DefaultStore(appID: "expr", configuration: .init(onProblem: { problems.append($0) }))
        let s = store.named(.appMemory)
        s.configureValidation(
            .init(mode: .lenient, schema: ["cart": Rule(kind: .object, defaultValue: ["count": 0], max: 1)]))
        s.set("cart", ["count": 1])
        let runs = Recorder<String>()
        s.registerLiveExpression(
            .init(id: "summary", outputKeyPath: "summary", dependsOn: ["price", "cart.count"]) { get in
                runs.append("summary")
                return .string("count \(get("cart.count").map { "\($0)" } ?? "-")")
            })
        s.registerLiveExpression(sum("total", "cart.total", ["price"], runs: runs))
        let before = runs.values.count
        s.set("price", 3)
        #expect(runs.values.dropFirst(before) == ["summary", "total"])
        let problem = try #require(problems.values.last)
        #expect(problem.code == .dependencyCycle)
        #expect(problem.message.contains("total changed an input of summary"))
        #expect(s.get("cart") == ["count": 0])
    }
}
