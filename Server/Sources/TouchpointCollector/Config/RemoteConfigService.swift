import Crypto
import Foundation
import TouchpointCore

/// A stored remote-config document and its entity tag.
public struct ConfigDocument: Sendable, Hashable {
    /// Which document.
    public var kind: ConfigKind
    /// The document's bytes, exactly as stored and served.
    public var body: String
    /// SHA-256 of ``body`` in lowercase hex (the `ETag` header quotes it).
    public var sha256: String
    /// When it was stored.
    public var updatedAt: Date

    /// The `ETag` header value: the quoted SHA-256.
    public var etag: String { "\"\(sha256)\"" }
}

/// Stores and serves the remote-config documents (survey config, promo catalog) per source.
public final class RemoteConfigService: Sendable {
    let storage: any ConfigDocuments
    /// The validators documents must pass before they are stored.
    public let validators: ConfigValidatorRegistry
    private let clock: any WallClock

    init(storage: any ConfigDocuments, validators: ConfigValidatorRegistry, clock: any WallClock) {
        self.storage = storage
        self.validators = validators
        self.clock = clock
    }

    /// The document of `kind` for `source`.
    /// - Returns: the document, or nil when none has been stored.
    /// - Throws: ``CollectorError`` `not_found` when `kind` is not served; storage errors.
    public func document(source: String, kind: ConfigKind) async throws -> ConfigDocument? {
        guard validators.contains(kind) else { throw unknownKind(kind) }
        guard let stored = try await storage.config(source: source, kind: kind.rawValue) else { return nil }
        return ConfigDocument(
            kind: kind, body: stored.body, sha256: stored.etag,
            updatedAt: Date(timeIntervalSince1970: Double(stored.updatedAt) / 1000))
    }

    /// Validates and stores a document, replacing the previous one.
    /// - Parameters:
    ///   - body: the document's JSON bytes; stored exactly as given.
    /// - Returns: the stored document with its new ETag.
    /// - Throws: ``CollectorError``: `not_found` for a kind that is not served, `invalid_json`,
    ///   or `validation_failed` with the path of the first problem and the list of all of them.
    @discardableResult
    public func store(source: String, kind: ConfigKind, body: [UInt8]) async throws -> ConfigDocument {
        guard validators.contains(kind) else { throw unknownKind(kind) }
        let document: JSONValue
        do {
            document = try JSONParser.parse(body)
        } catch {
            throw CollectorError(.invalidJSON, "body: \(error.description)")
        }
        let problems = validators.problems(in: document, kind: kind) ?? []
        if let first = problems.first {
            let more = problems.count > 1 ? " (and \(problems.count - 1) more problems)" : ""
            throw CollectorError(
                .validationFailed, "\(first.description)\(more)", path: first.path.description, problems: problems)
        }
        let text = String(decoding: body, as: UTF8.self)
        let sha256 = Self.sha256(text)
        let now = clock.now()
        try await storage.putConfig(
            StoredConfig(
                source: source, kind: kind.rawValue, body: text, etag: sha256,
                updatedAt: Timestamp.milliseconds(now)))
        return ConfigDocument(kind: kind, body: text, sha256: sha256, updatedAt: Timestamp.millisecondAligned(now))
    }

    /// The SHA-256 of `text`'s UTF-8 bytes in lowercase hex.
    static func sha256(_ text: String) -> String {
        SHA256.hash(data: Array(text.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    private func unknownKind(_ kind: ConfigKind) -> CollectorError {
        let served = validators.kinds.map(\.rawValue).joined(separator: ", ")
        return CollectorError(
            .notFound, "no config kind \"\(kind.rawValue)\"; this collector serves: \(served.isEmpty ? "none" : served)"
        )
    }
}
