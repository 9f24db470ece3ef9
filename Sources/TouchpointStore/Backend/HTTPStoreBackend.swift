import Foundation
import TouchpointCore

/// A ``StoreBackendAdapter`` that keeps backend scopes on a Touchpoint collector, through its
/// `GET`/`PUT /v1/scenario/{namespace}/{scenarioID}` endpoints and any ``HTTPTransport``.
///
/// ```swift
/// let backend = HTTPStoreBackend(collector: URL(string: "https://collector.example")!, writeKey: "wk_live_…")
/// let store = DefaultStore(appID: "com.example.shop", configuration: .init(backend: backend))
/// let sync = store.backendSync(namespace: "acme", scenarioID: "checkout")
/// try await sync.pull()
/// sync.store.set("cart.coupon", "SPRING")
/// try await sync.push()   // 412 from the collector → StoreError.Code.conflict, nothing overwritten
/// ```
///
/// **Wire format.** A pull is a `GET`: `200` gives the document (a JSON object, each member a
/// top-level key in the tagged encoding of ``StoreValue/jsonValue``, so colors and URLs come back
/// as themselves) and its `ETag`; `404` means the collector has none. A push is a `PUT` of the same
/// object with `If-Match: <etag>` (``StoreBackendPrecondition/ifMatch(_:)``) or `If-None-Match: *`
/// (``StoreBackendPrecondition/ifAbsent``); the new `ETag` comes back in the answer. The write key
/// goes as HTTP Basic auth, never in the URL, so URLs can appear in errors and logs.
///
/// **Conflicts.** When the collector answers `412 Precondition Failed`, the backend fetches the
/// document again and throws ``StoreError`` with ``StoreError/Code/conflict`` whose message names
/// the ETag the collector holds now (or says that it holds none), the same contract and words as
/// ``InMemoryStoreBackend``. Nothing is overwritten and nothing is retried: the caller pulls,
/// re-applies its change and pushes again (see ``StoreBackendSync``).
///
/// **Whose documents.** Without a ``User``, the backend reads a namespace's own documents, which
/// every user of the app shares: the collector serves them to the write key but takes writes only
/// with its admin token (the write key ships inside the app, so anyone has it). With a ``User`` —
/// an id and the signature the app's own backend made for it with the source's identity secret —
/// every scope is that user's: `/v1/users/<id>/scenario/<namespace>/<scenarioID>`, read and
/// written by that user only. A push with a precondition that overwrites whatever is stored is
/// not possible from the app at all; the SDK only sends `If-Match` with an ETag it read.
///
/// **The namespace's own document.** A scope without a scenario id, `backend(namespace: "acme")`,
/// is the path segment ``namespaceDocumentID`` (`-`): `/v1/scenario/acme/-`. That name is
/// therefore reserved: a scenario whose id is `-` is refused rather than silently sharing the
/// namespace's document.
///
/// **Names in URLs.** The namespace and scenario id are percent-encoded as path segments
/// (everything but letters, digits and `-._~`; a segment that is only dots is encoded too, so
/// `..` cannot climb a level). The collector takes each as 1 to 200 bytes as sent: an empty name
/// is refused before anything is sent, a longer one is answered `400`; both are
/// ``StoreError/Code/backendFailure`` (``InMemoryStoreBackend`` takes any string).
///
/// **Consent.** With a ``gate`` (``TouchpointSDK`` gives its own, closed while the user opted out
/// of recording), nothing is sent while the gate is closed: a pull or a push throws
/// ``StoreError/Code/backendFailure`` saying so, and the caller tries again after opting in.
///
/// **Failures.** Every other status and every transport error is a ``StoreError`` with
/// ``StoreError/Code/backendFailure`` whose message names the method, the URL and the status (and
/// the collector's own explanation when it gave one), e.g.
/// `acme/checkout: PUT http://127.0.0.1:8080/v1/scenario/acme/checkout: HTTP 401: missing or wrong write key`.
public final class HTTPStoreBackend: StoreBackendAdapter {
    /// The path segment that stands for "no scenario id": the namespace's own document.
    public static let namespaceDocumentID = "-"

    /// A signed-in user of the app, as the collector checks it.
    public struct User: Sendable, Hashable {
        /// The user id, as the app's backend knows it.
        public var id: String
        /// The user id's signature from the app's backend: lowercase hex HMAC-SHA256 of the id
        /// with the source's identity secret (`touchpoint serve --identity-secret`).
        public var signature: String

        /// Creates a user identity.
        public init(id: String, signature: String) {
            self.id = id
            self.signature = signature
        }
    }

    /// The header that carries ``User/signature``.
    public static let signatureHeader = "X-Touchpoint-User-Signature"

    /// The collector's base URL, e.g. `http://127.0.0.1:8080`.
    public let collector: URL
    /// Whose documents this backend reads and writes: a user's, or nil for the namespaces' own.
    public let user: User?
    /// Seconds one request may take, from sending to the last byte of the answer.
    public let timeout: TimeInterval
    /// While closed, no request is sent (see the type's documentation); nil: always sent.
    public let gate: RequestGate?
    private let authorization: String
    private let transport: any HTTPTransport

    /// Creates a backend for the collector at `collector`.
    /// - Parameters:
    ///   - collector: the collector's base URL (scheme, host, port, and a path prefix if it is
    ///     mounted under one).
    ///   - writeKey: the source's write key; each source has its own scenario documents.
    ///   - user: the signed-in user whose documents to keep, or nil for the namespaces' own
    ///     (read-only from an app).
    ///   - transport: how requests are sent (``URLSessionTransport`` by default).
    ///   - timeout: seconds one request may take (15 by default).
    ///   - gate: while closed, nothing is sent (the user opted out); nil sends always.
    public init(
        collector: URL, writeKey: String, user: User? = nil, transport: any HTTPTransport = URLSessionTransport(),
        timeout: TimeInterval = 15, gate: RequestGate? = nil
    ) {
        self.collector = collector
        self.user = user
        self.gate = gate
        self.authorization = TransportHeaders.basicAuthorization(user: writeKey)
        self.transport = transport
        self.timeout = timeout
    }

    /// The URL of a scope's document: `<collector>/v1/scenario/<namespace>/<scenarioID or ->`, or
    /// with a ``user``, `<collector>/v1/users/<user id>/scenario/<namespace>/<scenarioID or ->`.
    /// - Throws: ``StoreError`` (``StoreError/Code/backendFailure``) for an empty namespace or
    ///   scenario id, and for the reserved scenario id `-`.
    public func url(namespace: String, scenarioID: String?) throws(StoreError) -> URL {
        if namespace.isEmpty || scenarioID?.isEmpty == true {
            throw StoreError(
                .backendFailure, keyPath: Self.name(namespace, scenarioID),
                "the collector needs a namespace and a scenario id of at least one character")
        }
        if scenarioID == Self.namespaceDocumentID {
            throw StoreError(
                .backendFailure, keyPath: Self.name(namespace, scenarioID),
                "the scenario id \"\(Self.namespaceDocumentID)\" is reserved for the namespace's own document "
                    + "(scenarioID nil)")
        }
        if user?.id.isEmpty == true {
            throw StoreError(
                .backendFailure, keyPath: Self.name(namespace, scenarioID), "the user id is empty")
        }
        let scope = user.map { ["v1", "users", $0.id, "scenario"] } ?? ["v1", "scenario"]
        let path = (scope + [namespace, scenarioID ?? Self.namespaceDocumentID])
            .map(Self.encodeSegment).joined(separator: "/")
        var base = collector.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + "/" + path) else {
            throw StoreError(
                .backendFailure, keyPath: Self.name(namespace, scenarioID), "\(base)/\(path) is not a URL")
        }
        return url
    }

    /// The collector's document, or nil when it has none (`404`).
    /// - Throws: ``StoreError`` (``StoreError/Code/backendFailure``) naming the URL and the status.
    public func pull(namespace: String, scenarioID: String?) async throws -> StoreBackendDocument? {
        let name = Self.name(namespace, scenarioID)
        let url = try self.url(namespace: namespace, scenarioID: scenarioID)
        let response = try await send(TransportRequest(method: .get, url: url), name: name)
        switch response.status {
        case 200:
            guard let etag = response.headers["ETag"], !etag.isEmpty else {
                throw failure(name, .get, url, "HTTP 200 without an ETag")
            }
            return StoreBackendDocument(values: try decode(response.body, name: name, url: url), etag: etag)
        case 404:
            return nil
        default:
            throw failure(name, .get, url, response)
        }
    }

    /// Stores `values` when the collector's document matches `precondition`.
    /// - Returns: the new ETag.
    /// - Throws: ``StoreError`` with ``StoreError/Code/conflict`` on `412` (naming what the
    ///   collector holds now); ``StoreError/Code/backendFailure`` naming the URL and the status otherwise.
    public func push(
        _ values: [String: StoreValue], namespace: String, scenarioID: String?,
        precondition: StoreBackendPrecondition
    ) async throws -> String {
        let name = Self.name(namespace, scenarioID)
        let url = try self.url(namespace: namespace, scenarioID: scenarioID)
        var request = TransportRequest(method: .put, url: url)
        request.headers["Content-Type"] = "application/json"
        switch precondition {
        case .ifMatch(let etag): request.headers["If-Match"] = etag
        case .ifAbsent: request.headers["If-None-Match"] = "*"
        }
        request.body = JSONValue.object(values.mapValues(\.jsonValue)).jsonBytes(sortedKeys: true)
        let response = try await send(request, name: name)
        switch response.status {
        case 200..<300:
            if let etag = response.headers["ETag"], !etag.isEmpty { return etag }
            if let etag = (try? JSONParser.parse(response.body))?["etag"]?.stringValue { return etag }
            throw failure(name, .put, url, "HTTP \(response.status) without an ETag")
        case 412:
            throw await conflict(name: name, namespace: namespace, scenarioID: scenarioID, expected: precondition)
        default:
            throw failure(name, .put, url, response)
        }
    }

    // MARK: Conflicts

    /// The conflict error for a `412`, after fetching what the collector holds now. A failed
    /// fetch does not hide the conflict: the error is still a conflict, naming why the fetch failed.
    private func conflict(
        name: String, namespace: String, scenarioID: String?, expected: StoreBackendPrecondition
    ) async -> StoreError {
        let current: StoreBackendDocument?
        do {
            current = try await pull(namespace: namespace, scenarioID: scenarioID)
        } catch {
            return StoreError(
                .conflict, keyPath: name,
                "the document changed on the server meanwhile (HTTP 412); fetching it again failed: \(error)")
        }
        switch (expected, current) {
        case (.ifAbsent, let current?):
            return StoreError(
                .conflict, keyPath: name, "the document already exists (ETag \(current.etag)); pull it first")
        case (.ifAbsent, nil):
            // Written and deleted again between the PUT and the GET: still someone else's change.
            return StoreError(.conflict, keyPath: name, "the document changed on the server meanwhile; pull it first")
        case (.ifMatch(let etag), let current):
            return StoreError(
                .conflict, keyPath: name, "expected ETag \(etag), the server has \(current?.etag ?? "no document")")
        }
    }

    // MARK: Requests

    private func send(_ request: TransportRequest, name: String) async throws(StoreError) -> TransportResponse {
        if let gate, !gate.isOpen {
            throw failure(
                name, request.method, request.url,
                "not sent: the user opted out of recording (the request gate is closed)")
        }
        var request = request
        request.headers["Authorization"] = authorization
        if let user { request.headers[Self.signatureHeader] = user.signature }
        request.headers["Accept"] = "application/json"
        request.timeout = timeout
        do {
            return try await transport.send(request)
        } catch let error as TransportError {
            throw failure(name, request.method, request.url, "\(error.code): \(error.reason)")
        } catch {
            throw failure(name, request.method, request.url, "\(error)")
        }
    }

    private func decode(_ body: [UInt8], name: String, url: URL) throws(StoreError) -> [String: StoreValue] {
        let json: JSONValue
        do {
            json = try JSONParser.parse(body)
        } catch {
            throw failure(name, .get, url, "HTTP 200 with a body that is not JSON: \(error.description)")
        }
        guard case .object(let members) = json else {
            throw failure(name, .get, url, "HTTP 200 with \(json.typeName), not a JSON object")
        }
        return members.mapValues(StoreValue.init(json:))
    }

    private func failure(_ name: String, _ method: TransportMethod, _ url: URL, _ response: TransportResponse)
        -> StoreError
    {
        var detail = "HTTP \(response.status)"
        if let message = (try? JSONParser.parse(response.body))?["error"]?.stringValue {
            detail += ": \(message)"
        } else if !response.body.isEmpty {
            detail += ": " + response.bodyExcerpt()
        }
        return failure(name, method, url, detail)
    }

    private func failure(_ name: String, _ method: TransportMethod, _ url: URL, _ detail: String) -> StoreError {
        StoreError(.backendFailure, keyPath: name, "\(method) \(url.absoluteString): \(detail)")
    }

    private static func name(_ namespace: String, _ scenarioID: String?) -> String {
        "\(namespace)/\(scenarioID ?? namespaceDocumentID)"
    }

    /// Percent-encodes a path segment: only unreserved characters stay, and a segment of dots
    /// is encoded whole so that no URL normalisation can take it for `.` or `..`.
    static func encodeSegment(_ segment: String) -> String {
        if !segment.isEmpty, segment.allSatisfy({ $0 == "." }) {
            return String(repeating: "%2E", count: segment.count)
        }
        var encoded = ""
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                encoded += byte < 16 ? "%0\(hex)" : "%\(hex)"
            }
        }
        return encoded
    }
}
