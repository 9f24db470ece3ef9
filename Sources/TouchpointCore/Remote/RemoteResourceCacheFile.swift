import Foundation

/// The disk cache of one ``RemoteResource``: one file holding a JSON header line (URL, ETag,
/// fetch time, body length) and then the body bytes, replaced atomically with ``AtomicFile``.
///
/// ```
/// {"etag":"\"v7\"","fetchedAt":"2026-01-01T00:00:00.000Z","length":1234,"url":"https://…","version":1}
/// <1234 body bytes>
/// ```
struct RemoteResourceCacheFile: Sendable {
    /// A cached body and what is known about it.
    struct Entry: Equatable {
        var body: [UInt8]
        var etag: String?
        var fetchedAt: Date
    }

    /// Why a cache file was not usable.
    struct Problem: Error, Equatable {
        var reason: String
    }

    let path: String
    let url: URL

    /// The cached entry; nil when there is no file or it belongs to another URL.
    /// - Throws: ``Problem`` when the file exists but cannot be read or is malformed.
    func read() throws(Problem) -> Entry? {
        let bytes: [UInt8]
        do {
            guard let read = try AtomicFile.read(path) else { return nil }
            bytes = read
        } catch {
            throw Problem(reason: "\(error)")
        }
        guard let newline = bytes.firstIndex(of: 10) else { throw Problem(reason: "no header line") }
        let header: JSONValue
        do {
            header = try JSONParser.parse(Array(bytes[..<newline]))
        } catch {
            throw Problem(reason: "header is not JSON: \(error)")
        }
        guard header["version"]?.intValue == 1 else { throw Problem(reason: "unknown cache format version") }
        guard let cachedURL = header["url"]?.stringValue else { throw Problem(reason: "header has no url") }
        guard cachedURL == url.absoluteString else { return nil }
        guard let fetchedText = header["fetchedAt"]?.stringValue, let fetchedAt = Timestamp.parse(fetchedText) else {
            throw Problem(reason: "header has no valid fetchedAt")
        }
        guard let length = header["length"]?.intValue else { throw Problem(reason: "header has no length") }
        let body = Array(bytes[(newline + 1)...])
        guard body.count == length else {
            throw Problem(reason: "body is \(body.count) bytes, header says \(length)")
        }
        let etag: String?
        switch header["etag"] {
        case nil, .null?: etag = nil
        case .string(let value)?: etag = value
        default: throw Problem(reason: "etag is not a string")
        }
        return Entry(body: body, etag: etag, fetchedAt: fetchedAt)
    }

    /// Replaces the file with `entry`.
    /// - Throws: ``FileError`` when it cannot be written.
    func write(_ entry: Entry) throws(FileError) {
        var header: [String: JSONValue] = [
            "version": 1,
            "url": .string(url.absoluteString),
            "fetchedAt": .string(Timestamp.format(entry.fetchedAt)),
            "length": .int(entry.body.count),
        ]
        header["etag"] = entry.etag.map(JSONValue.string) ?? .null
        var bytes = JSONValue.object(header).jsonBytes(sortedKeys: true)
        bytes.append(10)
        bytes.append(contentsOf: entry.body)
        // Not fsynced: a cache lost in a crash is refetched, and a torn file is detected on read.
        try AtomicFile.write(bytes, to: path, durable: false)
    }
}
