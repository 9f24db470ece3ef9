// Runs N scenario-store writes of one kind, for counting instructions with callgrind, which
// stays exact on a busy machine where wall-clock medians do not:
//
//   swift build -c release --product StoreInstructionCounts
//   valgrind --tool=callgrind --callgrind-out-file=a .build/release/StoreInstructionCounts chain 1000
//   valgrind --tool=callgrind --callgrind-out-file=b .build/release/StoreInstructionCounts chain 3000
//   # (total of b - total of a) / 2000 = instructions per write, setup excluded
import Foundation
import StoreWorkloads
import Touchpoint

let arguments = CommandLine.arguments.dropFirst()
let mode = arguments.first ?? "chain"
let count = arguments.dropFirst().first.flatMap { Int($0) } ?? 1_000

@inline(never) func write(_ store: ScopedStore, _ keyPath: String, times: Int) {
    for index in 0..<times { store.set(keyPath, .integer(index)) }
}

/// Each write followed by a read of the chain's end, so the outputs held in slots are written
/// into the value tree every time (the cost a reader pays).
@inline(never) func writeAndRead(_ store: ScopedStore, times: Int) {
    for index in 0..<times {
        store.set("n0", .integer(index))
        precondition(store.get("n50") == .integer(index + 50))
    }
}

switch mode {
case "chain":
    write(chainStore(depth: 50), "n0", times: count)
case "chain-read":
    writeAndRead(chainStore(depth: 50), times: count)
case "plain":
    write(chainStore(depth: 0), "n0", times: count)
case "unrelated", "affected":
    let subscribed = SubscribedStore(unrelated: 10_000, affected: mode == "affected" ? 1 : 0)
    write(subscribed.store, "cart.total", times: count)
    withExtendedLifetime(subscribed) {}
default:
    FileHandle.standardError.write(
        Data("usage: StoreInstructionCounts chain|chain-read|plain|unrelated|affected [count]\n".utf8))
    exit(2)
}
