import TouchpointCore

/// The validators that config documents pass before the collector stores them, one per kind.
///
/// The collector only knows the structure of each document; the modules that read the documents
/// (TouchpointSurveys, TouchpointPromo) know their rules. Plug such a validator in with one line:
///
/// ```swift
/// var validators = ConfigValidatorRegistry.structural
/// validators.register(.surveys) { document in SurveyConfigValidator.validate(document) }
/// let configuration = CollectorConfiguration(validators: validators)
/// ```
///
/// `touchpoint serve` uses the CLI's `ConfigValidatorRegistry.touchpoint`, which registers the
/// survey and promo modules' validators this way.
///
/// A kind without a validator is not served: `GET`/`PUT /v1/config/<kind>` answer 404.
public struct ConfigValidatorRegistry: Sendable {
    /// Checks one document; returns every problem found (empty when the document is valid).
    public typealias Validator = @Sendable (JSONValue) -> [JSONProblem]

    private var validators: [ConfigKind: Validator] = [:]

    /// An empty registry: no kind is served.
    public init() {}

    /// Structural checks for ``ConfigKind/surveys`` (an object with a `surveys` array of objects
    /// with a string `id`) and ``ConfigKind/catalog`` (the same with `apps`).
    public static var structural: ConfigValidatorRegistry {
        var registry = ConfigValidatorRegistry()
        registry.register(.surveys) { StructuralConfigValidator.problems(in: $0, listKey: "surveys") }
        registry.register(.catalog) { StructuralConfigValidator.problems(in: $0, listKey: "apps") }
        return registry
    }

    /// Sets the validator for `kind`, replacing any earlier one.
    public mutating func register(_ kind: ConfigKind, _ validator: @escaping Validator) {
        validators[kind] = validator
    }

    /// The kinds served, in name order.
    public var kinds: [ConfigKind] { validators.keys.sorted { $0.rawValue < $1.rawValue } }

    /// The problems `validator(kind)` finds in `document`, or nil when `kind` has no validator.
    public func problems(in document: JSONValue, kind: ConfigKind) -> [JSONProblem]? {
        validators[kind].map { $0(document) }
    }

    /// Whether `kind` is served.
    public func contains(_ kind: ConfigKind) -> Bool { validators[kind] != nil }
}

/// The structure shared by the survey config and the promo catalog: a list of objects with ids.
enum StructuralConfigValidator {
    static func problems(in document: JSONValue, listKey: String) -> [JSONProblem] {
        guard case .object(let members) = document else {
            return [JSONProblem(path: .root, message: "expected an object, found \(document.typeName)")]
        }
        let listPath = JSONPath.root.appending(listKey)
        guard let list = members[listKey] else { return [JSONProblem(path: listPath, message: "missing")] }
        guard case .array(let entries) = list else {
            return [JSONProblem(path: listPath, message: "expected an array, found \(list.typeName)")]
        }
        var problems: [JSONProblem] = []
        var seen: [String: Int] = [:]
        for (index, entry) in entries.enumerated() {
            let path = listPath.appending(index: index)
            guard case .object(let fields) = entry else {
                problems.append(JSONProblem(path: path, message: "expected an object, found \(entry.typeName)"))
                continue
            }
            let idPath = path.appending("id")
            switch fields["id"] {
            case nil:
                problems.append(JSONProblem(path: idPath, message: "missing"))
            case .string(let id)?:
                if id.isEmpty {
                    problems.append(JSONProblem(path: idPath, message: "empty"))
                } else if let first = seen[id] {
                    problems.append(
                        JSONProblem(path: idPath, message: "duplicate id \"\(id)\" (also \(listKey)[\(first)].id)"))
                } else {
                    seen[id] = index
                }
            case let other?:
                problems.append(JSONProblem(path: idPath, message: "expected a string, found \(other.typeName)"))
            }
        }
        return problems
    }
}
