import Foundation

/// A document stored as `Data` in `UserDefaults`, one key per app.
struct UserDefaultsSink: PersistenceSink {
    let suite: String?
    let key: String

    private var defaults: UserDefaults { suite.flatMap(UserDefaults.init(suiteName:)) ?? .standard }

    var location: String { "UserDefaults(\(suite ?? "standard"))[\(key)]" }

    func read() throws(StoreError) -> [UInt8]? {
        guard let stored = defaults.object(forKey: key) else { return nil }
        if let data = stored as? Data { return [UInt8](data) }
        if let text = stored as? String { return Array(text.utf8) }
        throw StoreError(.corruptData, keyPath: location, "expected data, found \(type(of: stored))")
    }

    func write(_ bytes: [UInt8]) throws(StoreError) {
        defaults.set(Data(bytes), forKey: key)
    }

    /// Moves the bytes to `<key>.corrupt`.
    func setAside(_ bytes: [UInt8]) -> String? {
        defaults.set(Data(bytes), forKey: key + ".corrupt")
        return "\(location).corrupt"
    }
}
