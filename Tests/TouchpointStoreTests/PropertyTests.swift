import PropertyBased
import Testing
import TouchpointStore

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

/// Random sequences of writes: every subscriber's latest value equals what the store holds at its
/// path, and no subscriber is told about a value it already had.
struct PropertyTests {
    static let writePaths = [
        "a", "a.b", "a.c", "a.b.d", "list", "list[0]", "list[1]", "list[0].x", "list[2].x", "m.n", "$",
    ]
    static let watchPaths = [
        "a", "a.b", "a.b.d", "a.*", "list", "list[0]", "list[1].x", "list[*].x", "m", "missing", "$",
    ]

    static func value(_ code: Int) -> StoreValue {
        switch code % 9 {
        case 0: return .integer(code % 3)
        case 1: return .number(Double(code % 2))
        case 2: return .string(code % 2 == 0 ? "x" : "y")
        case 3: return .bool(code % 2 == 0)
        case 4: return .null
        case 5: return .array([.integer(code % 2), ["x": .integer(code % 3)]])
        case 6: return ["b": .integer(code % 2), "c": ["d": .bool(true)]]
        case 7: return ["x": .integer(code % 4)]
        default: return .object([:])
        }
    }

    /// Applies the write that `code` stands for.
    static func apply(_ code: Int, to store: any KeyValueStore) {
        let path = writePaths[(code / 7) % writePaths.count]
        let operand = code / 101
        switch code % 7 {
        case 0, 1, 2: store.set(path, value(operand))
        case 3: store.remove(path)
        case 4: store.merge(path, ["b": value(operand), "c": operand % 2 == 0 ? .null : value(operand + 1)])
        case 5: store.replaceAll(with: ["a": value(operand), "list": [["x": .integer(operand % 3)], ["x": 1]]])
        default:
            store.transaction { t in
                t.set(writePaths[operand % writePaths.count], value(operand))
                t.remove(writePaths[(operand / 3) % writePaths.count])
            }
        }
    }

    @Test func subscribersViewsEqualTheSnapshot() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...1_000_000).array(of: 1...40)) { codes in
            let store = DefaultStore(appID: "property").named(.appMemory)
            var received: [String: Recorder<StoreValue?>] = [:]
            var cancellables: [AnyCancellable] = []
            for path in Self.watchPaths {
                let recorder = Recorder<StoreValue?>()
                received[path] = recorder
                cancellables.append(store.publisher(for: path).sink { recorder.append($0) })
            }
            let combined = Recorder<StoreValue>()
            cancellables.append(store.publisher(for: ["a.b", "list[0]"]).sink { combined.append($0) })
            for code in codes {
                Self.apply(code, to: store)
                for path in Self.watchPaths {
                    let values = received[path]!.values
                    #expect(values.last! == store.get(path), "\(path) after \(code)")
                }
                #expect(
                    combined.values.last == [
                        "a.b": store.get("a.b") ?? .null, "list[0]": store.get("list[0]") ?? .null,
                    ])
            }
            for path in Self.watchPaths {
                let values = received[path]!.values
                #expect(
                    zip(values, values.dropFirst()).allSatisfy { $0 != $1 }, "\(path) was told about a value it had")
            }
            withExtendedLifetime(cancellables) {}
        }
    }
}
