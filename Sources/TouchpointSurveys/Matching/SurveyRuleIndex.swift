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
    /// The rules that share one event name, flattened for the hot path.
    struct Bucket: Sendable {
        /// The property keys the bucket's rules test; slot `i` holds `keys[i]`'s value.
        var keys: [String] = []
        /// The rules' positions in the config, in order.
        var positions: [Int] = []
        /// Where each rule's matchers end in ``matchers`` (they start where the previous end).
        var ends: [Int] = []
        /// Every rule's matchers, one rule after another.
        var matchers: [CompiledMatcher] = []
        /// The string operands of `eq`/`ne` matchers.
        var strings: [String] = []
        /// The operands of `contains`/`notContains` matchers.
        var needles: [Needle] = []
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
            let conditions = rule.trigger.event.properties ?? [:]
            for key in conditions.keys.sorted() {
                let slot: Int
                if let existing = bucket.keys.firstIndex(of: key) {
                    slot = existing
                } else {
                    slot = bucket.keys.count
                    bucket.keys.append(key)
                }
                bucket.matchers.append(
                    CompiledMatcher(conditions[key]!, slot: slot, strings: &bucket.strings, needles: &bucket.needles))
            }
            bucket.positions.append(position)
            bucket.ends.append(bucket.matchers.count)
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
        return withUnsafeTemporaryAllocation(of: JSONValue?.self, capacity: max(bucket.keys.count, 1)) { values in
            let base = values.baseAddress!
            for (slot, key) in bucket.keys.enumerated() { (base + slot).initialize(to: properties[key]) }
            defer { base.deinitialize(count: bucket.keys.count) }
            return bucket.matchers.withUnsafeBufferPointer { matchers in
                bucket.strings.withUnsafeBufferPointer { strings in
                    bucket.needles.withUnsafeBufferPointer { needles in
                        var matched: [Int] = []
                        var start = 0
                        for (rule, end) in bucket.ends.enumerated() {
                            var holds = true
                            for index in start..<end {
                                let matcher = matchers[index]
                                if !matcher.matches(base + matcher.slot, strings: strings, needles: needles) {
                                    holds = false
                                    break
                                }
                            }
                            if holds { matched.append(bucket.positions[rule]) }
                            start = end
                        }
                        return matched
                    }
                }
            }
        }
    }

    /// The positions of the rules that `event` triggers, in order.
    public func matchingRules(for event: Event) -> [Int] {
        matchingRules(name: event.name, properties: event.properties)
    }
}
