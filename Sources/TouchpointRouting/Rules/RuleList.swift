/// What ``EventTrackingRule`` and ``PropertyTrackingRule`` share: a list of types and names, and
/// whether it allows or prohibits.
struct RuleList: Sendable, Hashable {
    let rule: TrackingRule
    let types: Set<ObjectIdentifier>
    let names: Set<String>

    init(_ rule: TrackingRule, types: [Any.Type], names: [String]) {
        self.rule = rule
        self.types = Set(types.map { ObjectIdentifier($0) })
        self.names = Set(names)
    }

    /// Whether a subject of this type and name passes; the name is read only when names are listed.
    func allows(_ type: Any.Type, name: () -> String) -> Bool {
        let listed = types.contains(ObjectIdentifier(type)) || (!names.isEmpty && names.contains(name()))
        return listed == (rule == .allow)
    }
}
