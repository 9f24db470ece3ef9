/// An id of a source — a person, a session — hashed once, when it is made: a row's on its
/// request's task (``EventRow``), so that the writer groups and finds rows by an
/// integer instead of hashing two strings again each time.
struct SourcedID: Hashable, Comparable, Sendable {
    let source: String
    let id: String
    private let hashCode: Int

    init(source: String, id: String) {
        self.source = source
        self.id = id
        var hasher = Hasher()
        hasher.combine(source)
        hasher.combine(id)
        hashCode = hasher.finalize()
    }

    func hash(into hasher: inout Hasher) { hasher.combine(hashCode) }

    static func == (lhs: SourcedID, rhs: SourcedID) -> Bool {
        lhs.hashCode == rhs.hashCode && ExactText(lhs.source) == ExactText(rhs.source)
            && ExactText(lhs.id) == ExactText(rhs.id)
    }

    static func < (lhs: SourcedID, rhs: SourcedID) -> Bool {
        (ExactText(lhs.source), ExactText(lhs.id)) < (ExactText(rhs.source), ExactText(rhs.id))
    }
}
