import Foundation
import TouchpointCore

/// Validation options made ready to run: key paths parsed, patterns compiled.
struct Validator {
    struct CompiledRule {
        let keyPath: String
        let path: JSONPath
        let rule: ValidationRule
        let regex: NSRegularExpression?

        func violation(of value: StoreValue?) -> String? { rule.violation(of: value, regex: regex) }
    }

    /// One fix made in lenient mode, or the reason for a rejection.
    enum Finding {
        case fixed(path: JSONPath, value: StoreValue, reason: String)
        case rejected(reason: String)
    }

    let mode: ValidationOptions.Mode
    let rules: [CompiledRule]
    /// Rules that could not be compiled (bad key path or pattern), as messages.
    let problems: [String]

    init(_ options: ValidationOptions) {
        mode = options.mode
        var rules: [CompiledRule] = []
        var problems: [String] = []
        for (keyPath, rule) in options.schema.sorted(by: { $0.key < $1.key }) {
            let path: JSONPath
            do {
                path = try JSONPath(parsing: keyPath)
            } catch {
                problems.append("validation rule for \(keyPath) ignored: \(error)")
                continue
            }
            var regex: NSRegularExpression?
            if let pattern = rule.pattern {
                do {
                    regex = try NSRegularExpression(pattern: pattern)
                } catch {
                    problems.append(
                        "\(keyPath): the pattern \(pattern) is not a valid regular expression; writes there fail")
                }
            }
            if let defaultValue = rule.defaultValue, let reason = rule.violation(of: defaultValue, regex: regex) {
                problems.append("\(keyPath): the default value breaks its own rule: \(reason)")
            }
            rules.append(CompiledRule(keyPath: keyPath, path: path, rule: rule, regex: regex))
        }
        self.rules = rules
        self.problems = problems
    }

    var isEmpty: Bool { rules.isEmpty }

    /// Checks every location of every rule that a write at `written` can have changed, in `root`
    /// as it is after the write. Lenient fixes are reported, not applied; the caller applies them.
    func check(_ root: StoreValue, around written: JSONPath) -> [Finding] {
        var findings: [Finding] = []
        for compiled in rules where compiled.path.intersects(written) {
            forEachTarget(of: compiled, in: root) { target, value in
                guard target.intersects(written), let reason = compiled.violation(of: value) else { return }
                let message = "\(target): \(reason)"
                if mode == .lenient, let fixed = compiled.rule.fix(value, regex: compiled.regex) {
                    findings.append(.fixed(path: target, value: fixed, reason: message))
                } else {
                    findings.append(.rejected(reason: message))
                }
            }
        }
        return findings
    }

    /// The defaults of required rules (without wildcards) whose path is missing in `root`.
    func missingDefaults(in root: StoreValue) -> [(JSONPath, StoreValue)] {
        rules.compactMap { compiled in
            guard compiled.rule.required, !compiled.path.hasWildcard, let defaultValue = compiled.rule.defaultValue,
                compiled.path.components.count > 0, root.value(at: compiled.path.components[...]) == nil
            else { return nil }
            return (compiled.path, defaultValue)
        }
    }

    /// `root` without the values that break a rule (each replaced by its rule's default when it
    /// has a valid one): what a persistent scope writes to disk. Missing required values are not
    /// invented here.
    func validPortion(of root: StoreValue) -> StoreValue {
        var invalid: [(JSONPath, StoreValue?)] = []
        for compiled in rules {
            root.forEachMatch(of: compiled.path.components[...], prefix: []) { components, value in
                guard value != .null, compiled.violation(of: value) != nil else { return }
                let replacement = compiled.rule.defaultValue.flatMap { compiled.violation(of: $0) == nil ? $0 : nil }
                invalid.append((JSONPath(components: components), replacement))
            }
        }
        guard !invalid.isEmpty else { return root }
        var result = root
        // Later array elements first, so removing one does not shift the ones still to remove.
        for (path, replacement) in invalid.sorted(by: { Self.comesAfter($0.0, $1.0) }) {
            _ = try? result.write(replacement, at: path)
        }
        return result
    }

    /// Each location `compiled` names in `root`, with its value (nil when missing). A concrete
    /// path is one location, present or not; a pattern names its matches plus, for a required
    /// rule ending in a key, every matched parent that lacks that key.
    private func forEachTarget(of compiled: CompiledRule, in root: StoreValue, _ body: (JSONPath, StoreValue?) -> Void)
    {
        let components = compiled.path.components
        guard compiled.path.hasWildcard else {
            body(compiled.path, root.value(at: components[...]))
            return
        }
        if compiled.rule.required, case .key(let key)? = components.last {
            root.forEachMatch(of: components.dropLast(), prefix: []) { parent, value in
                if value.objectValue?[key] == nil, value.objectValue != nil {
                    body(JSONPath(components: parent + [.key(key)]), nil)
                }
            }
        }
        root.forEachMatch(of: components[...], prefix: []) { path, value in body(JSONPath(components: path), value) }
    }

    private static func comesAfter(_ a: JSONPath, _ b: JSONPath) -> Bool {
        for (x, y) in zip(a.components, b.components) where x != y {
            switch (x, y) {
            case (.index(let i), .index(let j)): return i > j
            case (.key(let k), .key(let l)): return k > l
            default: return false
            }
        }
        return a.components.count > b.components.count
    }
}
