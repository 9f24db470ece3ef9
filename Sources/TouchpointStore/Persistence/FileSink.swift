import Foundation
import TouchpointCore

/// A document in a file, replaced atomically (``AtomicFile``) on each write.
struct FileSink: PersistenceSink {
    let path: String

    var location: String { path }

    func read() throws(StoreError) -> [UInt8]? {
        do {
            return try AtomicFile.read(path)
        } catch {
            throw StoreError(.fileFailure, keyPath: path, error.description)
        }
    }

    func write(_ bytes: [UInt8]) throws(StoreError) {
        do {
            try AtomicFile.write(bytes, to: path, durable: true)
        } catch {
            throw StoreError(.fileFailure, keyPath: path, error.description)
        }
    }

    /// Renames the file to `<path>.corrupt-<timestamp>`.
    func setAside(_ bytes: [UInt8]) -> String? {
        let stamp = Timestamp.format(Date()).replacingOccurrences(of: ":", with: "-")
        let destination = "\(path).corrupt-\(stamp)"
        do {
            try FileManager.default.moveItem(atPath: path, toPath: destination)
            return destination
        } catch {
            do {
                try AtomicFile.write(bytes, to: destination, durable: true)
                return destination
            } catch {
                return nil
            }
        }
    }
}
