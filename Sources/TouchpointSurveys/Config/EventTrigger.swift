import TouchpointCore

/// A recorded event that shows a survey: its name, and conditions on its properties.
///
/// JSON: `{"name": "checkout_success", "properties": {"amount": {"op": "gt", "value": 50}, "plan": "pro"}}`.
/// Every property condition must hold (they are combined with AND); without `properties`
/// only the name must match. Names and strings compare case-sensitively.
public struct EventTrigger: Sendable, Hashable {
    /// The event name to match, e.g. `checkout_success`.
    public var name: String
    /// Conditions on the event's properties, by property key; nil or empty for none.
    public var properties: [String: PropertyMatcher]?

    /// Creates an event trigger.
    /// - Parameters:
    ///   - name: the event name.
    ///   - properties: conditions by property key.
    public init(name: String, properties: [String: PropertyMatcher]? = nil) {
        self.name = name
        self.properties = properties
    }

    /// Whether `name` and `properties` satisfy this trigger (the reference semantics; the
    /// engine evaluates a compiled ``SurveyRuleIndex`` that gives the same answers faster).
    public func matches(name: String, properties: [String: JSONValue]) -> Bool {
        guard name == self.name else { return false }
        for (key, matcher) in self.properties ?? [:] where !matcher.matches(properties[key]) { return false }
        return true
    }

    /// Why `properties` fail this trigger's conditions, for people reading a simulation:
    /// the first failing condition in key order, e.g. `amount 40 is not gt 100`; nil when they
    /// all hold.
    public func mismatch(in properties: [String: JSONValue]) -> String? {
        for key in (self.properties ?? [:]).keys.sorted() {
            let matcher = self.properties![key]!
            if !matcher.matches(properties[key]) { return matcher.explainMismatch(key: key, value: properties[key]) }
        }
        return nil
    }
}
