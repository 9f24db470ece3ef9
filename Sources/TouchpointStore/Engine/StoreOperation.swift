/// One write requested of a store, before its key path is parsed.
enum StoreOperation: Sendable {
    case set(String, StoreValue)
    case merge(String, [String: StoreValue])
    case remove(String)
    case replaceAll([String: StoreValue])
}
