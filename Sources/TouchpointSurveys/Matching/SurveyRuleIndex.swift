import TouchpointCore
import TouchpointEvents

/// The survey rules of a config, indexed by the event name that triggers them.
///
/// Evaluating an event costs one dictionary lookup of its name; an event no rule names stops
/// there. For a name that several rules share, each property the rules test is looked up once
/// per event, and every condition then compares an already-converted operand.
///
/// ```swift
/// let index = SurveyRuleIndex(config: config)
/// let positions = index.matchingRules(name: "checkout_success", properties: ["amount": 120])
/// let first = positions.first.map { config.surveys[$0] }
/// ```
public struct SurveyRuleIndex: Sendable {
    /// The rules that share one event name.
    struct Bucket: Sendable {
        /// The property keys the bucket's rules test; slot `i` holds `keys[i]`'s value.
        var keys: [String] = []
        /// The rules, in config order: their position in the config and their conditions.
        var rules: [(position: Int, matchers: [CompiledMatcher])] = []
    }

    /// The config's rules, in order.
    public let rules: [SurveyRule]
    private let buckets: [String: Bucket]

    /// Indexes a config's rules.
    public init(config: SurveyConfig) { self.init(rules: config.surveys) }

    /// Indexes rules, kept in the given order.
    public init(rules: [SurveyRule]) {
        self.rules = rules
        var buckets: [String: Bucket] = [:]
        for (position, rule) in rules.enumerated() {
            var bucket = buckets[rule.trigger.event.name, default: Bucket()]
            var matchers: [CompiledMatcher] = []
            for key in (rule.trigger.event.properties ?? [:]).keys.sorted() {
                let slot: Int
                if let existing = bucket.keys.firstIndex(of: key) {
                    slot = existing
                } else {
                    slot = bucket.keys.count
                    bucket.keys.append(key)
                }
                matchers.append(CompiledMatcher(rule.trigger.event.properties![key]!, slot: slot))
            }
            bucket.rules.append((position, matchers))
            buckets[rule.trigger.event.name] = bucket
        }
        self.buckets = buckets
    }

    /// Whether any rule is triggered by events named `name`.
    public func hasRules(forEventNamed name: String) -> Bool { buckets[name] != nil }

    /// The positions (in ``rules``) of the rules whose trigger matches, in order; empty when
    /// none does.
    /// - Parameters:
    ///   - name: the event's name.
    ///   - properties: the event's properties.
    public func matchingRules(name: String, properties: [String: JSONValue]) -> [Int] {
        guard let bucket = buckets[name] else { return [] }
        return bucket.keys.withUnsafeBufferPointer { keys in
            withUnsafeTemporaryAllocation(of: JSONValue?.self, capacity: max(keys.count, 1)) { values in
                for index in keys.indices { (values.baseAddress! + index).initialize(to: properties[keys[index]]) }
                defer { values.baseAddress!.deinitialize(count: keys.count) }
                var matched: [Int] = []
                for rule in bucket.rules where rule.matchers.allSatisfy({ $0.matches(values[$0.slot]) }) {
                    matched.append(rule.position)
                }
                return matched
            }
        }
    }

    /// The positions of the rules that `event` triggers, in order.
    public func matchingRules(for event: Event) -> [Int] {
        matchingRules(name: event.name, properties: event.properties)
    }
}
