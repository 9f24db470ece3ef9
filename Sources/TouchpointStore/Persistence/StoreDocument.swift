import Foundation
import TouchpointCore

/// The JSON document a persistent scope writes: the values and who wrote them, at which version.
///
/// ```json
/// {"appID":"com.acme.app","touchpointStore":1,"values":{"cart":{"total":12.5}},"version":"2.1.0"}
/// ```
///
/// `values` uses ``StoreValue``'s tagged JSON form, so colors, URLs and numbers read back as
/// themselves. Keys are written sorted, so the same values give the same bytes.
public struct StoreDocument: Sendable, Equatable {
    /// The value of the `touchpointStore` member: the document format's version.
    public static let formatVersion = 1

    /// The app that wrote the document.
    public var appID: String
    /// The app's data version when it was written; a different major version means the data is dropped.
    public var version: SemanticVersion
    /// The values, by top-level key.
    public var values: [String: StoreValue]

    /// Creates a document.
    public init(appID: String, version: SemanticVersion, values: [String: StoreValue]) {
        self.appID = appID
        self.version = version
        self.values = values
    }

    /// Reads a document.
    /// - Parameters:
    ///   - bytes: the document's JSON.
    ///   - source: where the bytes came from, for error messages (a file path, a defaults key).
    /// - Throws: ``StoreError`` with ``StoreError/Code/corruptData`` naming the source and what is
    ///   wrong where (the byte for broken JSON, the member for a wrong shape).
    public init(bytes: [UInt8], source: String) throws(StoreError) {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            throw StoreError(.corruptData, keyPath: source, "not a store document: \(error)")
        }
        guard case .object(let members) = json else {
            throw Self.problem(source, .root, "expected an object, found \(json.typeName)")
        }
        guard members["touchpointStore"]?.intValue == Self.formatVersion else {
            throw Self.problem(
                source, JSONPath.root.appending("touchpointStore"),
                "expected \(Self.formatVersion) (not a Touchpoint store document, or a newer format)")
        }
        guard let appID = members["appID"]?.stringValue else {
            throw Self.problem(source, JSONPath.root.appending("appID"), "expected a string")
        }
        guard let text = members["version"]?.stringValue, let version = SemanticVersion(text) else {
            throw Self.problem(source, JSONPath.root.appending("version"), "expected \"MAJOR.MINOR.PATCH\"")
        }
        guard case .object(let values)? = members["values"] else {
            throw Self.problem(source, JSONPath.root.appending("values"), "expected an object")
        }
        self.init(appID: appID, version: version, values: values.mapValues(StoreValue.init(json:)))
    }

    /// Reads the document in a file.
    /// - Returns: the document, or nil when the file does not exist.
    /// - Throws: ``StoreError``: ``StoreError/Code/corruptData`` for bad content,
    ///   ``StoreError/Code/fileFailure`` when the file cannot be read.
    public static func read(from url: URL) throws(StoreError) -> StoreDocument? {
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(url.path)
        } catch {
            throw StoreError(.fileFailure, keyPath: url.path, error.description)
        }
        guard let bytes else { return nil }
        return try StoreDocument(bytes: bytes, source: url.path)
    }

    /// The document as JSON bytes, keys sorted.
    public func encoded() -> [UInt8] {
        let json: JSONValue = [
            "touchpointStore": .int(Self.formatVersion),
            "appID": .string(appID),
            "version": .string(version.description),
            "values": .object(values.mapValues(\.jsonValue)),
        ]
        return json.jsonBytes(sortedKeys: true)
    }

    private static func problem(_ source: String, _ path: JSONPath, _ message: String) -> StoreError {
        StoreError(.corruptData, keyPath: source, "not a store document: \(JSONProblem(path: path, message: message))")
    }
}
