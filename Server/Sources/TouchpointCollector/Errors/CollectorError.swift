import HTTPTypes
import TouchpointCore

/// Why the collector refused a request: a stable ``code``, the HTTP status, and a message that
/// names what was wrong and where (`batch[17].messageId: missing`).
///
/// Every 4xx and 5xx the collector sends carries this as JSON:
/// `{"error": "...", "code": "invalid_json", "path": "...", "problems": [...]}`.
public struct CollectorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable identifier of the kind of refusal, usable as a metric label and by clients.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The identifier as it appears in the JSON (`invalid_json`).
        public let rawValue: String
        /// The status a response with this code carries.
        public let status: HTTPTypes.HTTPResponse.Status

        private init(_ rawValue: String, _ status: HTTPTypes.HTTPResponse.Status) {
            self.rawValue = rawValue
            self.status = status
        }

        /// The body is not well-formed JSON (400).
        public static let invalidJSON = Code("invalid_json", .badRequest)
        /// The body is JSON but not a request this endpoint understands (400).
        public static let invalidRequest = Code("invalid_request", .badRequest)
        /// A query parameter is missing or malformed (400).
        public static let invalidParameter = Code("invalid_parameter", .badRequest)
        /// More events than one request may carry (400).
        public static let tooManyEvents = Code("too_many_events", .badRequest)
        /// The body is larger than a request may be (413).
        public static let payloadTooLarge = Code("payload_too_large", .contentTooLarge)
        /// The body's `Content-Encoding` is not gzip, deflate or identity (415).
        public static let unsupportedEncoding = Code("unsupported_encoding", .unsupportedMediaType)
        /// No valid write key (ingest, config reads, scenarios) or admin token (queries, config writes) (401).
        public static let unauthorized = Code("unauthorized", .unauthorized)
        /// Nothing is stored at this address (404).
        public static let notFound = Code("not_found", .notFound)
        /// A config document failed validation (422).
        public static let validationFailed = Code("validation_failed", .unprocessableContent)
        /// `If-Match`/`If-None-Match` did not hold: someone else wrote first (412).
        public static let preconditionFailed = Code("precondition_failed", .preconditionFailed)
        /// A scenario write without `If-Match` or `If-None-Match` (428).
        public static let preconditionRequired = Code("precondition_required", .preconditionRequired)
        /// The credentials are valid but do not allow this (403): a write key where the admin
        /// token or a user's signature is needed.
        public static let forbidden = Code("forbidden", .forbidden)
        /// The request conflicts with what is stored, such as deleting a cohort that saved
        /// insights use (409; change what it names first).
        public static let conflict = Code("conflict", .conflict)
        /// The write would take the source past a quota (403; retrying does not help).
        public static let quotaExceeded = Code("quota_exceeded", .forbidden)
        /// Too many wrong attempts at a secret from one address; `Retry-After` says when to try again (429).
        public static let tooManyRequests = Code("too_many_requests", .tooManyRequests)
        /// The query ran past the time the store gives one and was stopped (422; asked again it
        /// would be stopped again: ask for a shorter range).
        public static let queryTooSlow = Code("query_too_slow", .unprocessableContent)
        /// The database did not answer (503).
        public static let storageUnavailable = Code("storage_unavailable", .serviceUnavailable)
        /// The collector's own files or settings are unusable (at start-up; 500 if ever served).
        public static let invalidConfiguration = Code("invalid_configuration", .internalServerError)

        public var description: String { rawValue }
    }

    /// The kind of refusal.
    public var code: Code
    /// What was wrong, for a person; starts with the path when there is one.
    public var message: String
    /// Where in the request body the problem is, when it is in the body.
    public var path: String?
    /// Every problem found, when a validator found several.
    public var problems: [JSONProblem]
    /// Seconds the client should wait before trying again, sent as `Retry-After`.
    public var retryAfter: Int?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, path: String? = nil, problems: [JSONProblem] = [], retryAfter: Int? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.problems = problems
        self.retryAfter = retryAfter
    }

    /// An error about one place in a JSON body, e.g. `batch: expected an array, found object`.
    public init(_ code: Code, problem: JSONProblem) {
        self.init(code, problem.description, path: problem.path.description, problems: [problem])
    }

    /// The HTTP status of the response.
    public var status: HTTPTypes.HTTPResponse.Status { code.status }

    public var description: String { message }

    /// The JSON body of the error response.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["error": .string(message), "code": .string(code.rawValue)]
        if let path { members["path"] = .string(path) }
        if !problems.isEmpty {
            members["problems"] = .array(
                problems.map { .object(["path": .string($0.path.description), "message": .string($0.message)]) })
        }
        return .object(members)
    }
}
