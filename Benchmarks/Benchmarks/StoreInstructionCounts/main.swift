// Runs N scenario-store writes of one kind, for counting instructions with callgrind, which
// stays exact on a busy machine where wall-clock medians do not:
//
//   swift build -c release --product StoreInstructionCounts
//   valgrind --tool=callgrind --callgrind-out-file=a .build/release/StoreInstructionCounts chain 1000
//   valgrind --tool=callgrind --callgrind-out-file=b .build/release/StoreInstructionCounts chain 3000
//   # (total of b - total of a) / 2000 = instructions per write, setup excluded
import Foundation
import Touchpoint

let arguments = CommandLine.arguments.dropFirst()
let mode = arguments.first ?? "chain"
let count = arguments.dropFirst().first.flatMap { Int($0) } ?? 1_000

/// A store where `n1 = n0 + 1`, `n2 = n1 + 1`, … up to `n<depth>`.
func chainStore(depth: Int) -> ScopedStore {
    let store = DefaultStore(appID: "bench").scoped(.appMemory)
    store.set("n0", 0)
    for level in stride(from: depth, through: 1, by: -1) {
        let input = "n\(level - 1)"
        store.registerLiveExpression(
            LiveExpression(id: "e\(level)", outputKeyPath: "n\(level)", dependsOn: [input]) { get in
                guard case .integer(let value)? = get(input) else { return nil }
                return .integer(value + 1)
            })
    }
    return store
}

/// A session store with 10,000 subscribers on paths unrelated to `cart.total`, plus `affected` on it.
func subscribedStore(affected: Int) -> (ScopedStore, [AnyCancellable]) {
    let store = DefaultStore(appID: "bench").scoped(.scenarioSession(id: "bench"))
    var cancellables: [AnyCancellable] = []
    for index in 0..<10_000 {
        let path = "screens.s\(index % 100).widgets[\(index / 100)].title"
        cancellables.append(store.publisher(for: path).sink { _ in })
    }
    for _ in 0..<affected { cancellables.append(store.publisher(for: "cart.total").sink { _ in }) }
    return (store, cancellables)
}

@inline(never) func write(_ store: ScopedStore, _ keyPath: String, times: Int) {
    for index in 0..<times { store.set(keyPath, .integer(index)) }
}

switch mode {
case "chain":
    write(chainStore(depth: 50), "n0", times: count)
case "plain":
    write(chainStore(depth: 0), "n0", times: count)
case "unrelated", "affected":
    let (store, cancellables) = subscribedStore(affected: mode == "affected" ? 1 : 0)
    write(store, "cart.total", times: count)
    withExtendedLifetime(cancellables) {}
default:
    FileHandle.standardError.write(Data("usage: StoreInstructionCounts chain|plain|unrelated|affected [count]\n".utf8))
    exit(2)
}
