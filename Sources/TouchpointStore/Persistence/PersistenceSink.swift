/// Where a persistent scope keeps its document's bytes.
protocol PersistenceSink: Sendable {
    /// Names the place in messages: a file path, or `UserDefaults(suite)[key]`.
    var location: String { get }
    /// The stored bytes, nil when nothing is stored.
    func read() throws(StoreError) -> [UInt8]?
    /// Replaces the stored bytes.
    func write(_ bytes: [UInt8]) throws(StoreError)
    /// Keeps unreadable bytes out of the way so the next write does not destroy them; returns where.
    func setAside(_ bytes: [UInt8]) -> String?
}
