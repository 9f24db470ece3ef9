import TouchpointCore

/// An event on its way into `events`, as an ``EventWriter`` prepares it on the request's task:
/// its source, its message and its person, hashed once.
///
/// Each writer has a row of its own with what else it works out ahead (``SQLiteEventWriter/Row``:
/// the message key, packed ids, the shared context; ``PostgresEventWriter/Row``); what both do with
/// their rows (the first copy of each message, the people and the identity links a write records)
/// is written once, over this protocol.
protocol EventRow {
    var source: String { get }
    var message: IngestMessage { get }
    /// The message's person and whether that is its user id (``PersonKeys/person(source:message:)``).
    var person: (person: PersonKeys.Person, isUser: Bool)? { get }
}

/// What deduplication keys on: (source, messageId).
struct MessageIdentity: Hashable, Sendable {
    @ExactText var source: String
    @ExactText var messageId: String
}

extension EventRow {
    /// The row's deduplication key.
    var identity: MessageIdentity { MessageIdentity(source: source, messageId: message.messageId) }
}

/// The first copy of each (source, messageId) among requests stored together, and where each
/// request's rows went: when two requests (or one) carry the same message, the one that came
/// first stores it, and each still learns exactly which of its events were new.
struct FirstCopies<Row: EventRow> {
    /// The rows to write, each key once, in order.
    private(set) var rows: [Row] = []
    /// Per request, per row: its place in `rows`, or nil for a later copy of a key.
    private(set) var positions: [[Int?]] = []

    /// The first copy of each key among `requests`, in order.
    init(_ requests: [[Row]]) {
        var claimed = Set<MessageIdentity>(minimumCapacity: requests.reduce(0) { $0 + $1.count })
        var rows: [Row] = []
        rows.reserveCapacity(claimed.capacity)
        positions = requests.map { request in
            request.map { row in
                guard claimed.insert(row.identity).inserted else { return nil }
                rows.append(row)
                return rows.count - 1
            }
        }
        self.rows = rows
    }

    /// Per request, one flag per row: true for the row that stored its key now (the first copy
    /// of a key among the requests, when `stored` says its write stored it), false for any
    /// other copy and for keys stored before.
    /// - Parameter stored: per row of `rows`, whether the write stored it.
    func flags(stored: [Bool]) -> [[Bool]] {
        positions.map { request in request.map { position in position.map { stored[$0] } ?? false } }
    }
}
