import TouchpointCore

/// Reading and writing inside a value tree by ``JSONPath``, in place.
///
/// Writes create missing objects along the way (and a missing array when the index is 0), may
/// append to an array at exactly its end, and refuse to turn a value of one kind into another:
/// writing `cart.total.amount` when `cart.total` is a number is a type mismatch, not a silent
/// replacement.
extension StoreValue {
    /// The value at a concrete path, or nil when any step is missing.
    func value(at components: ArraySlice<JSONPath.Component>) -> StoreValue? {
        var current = self
        for component in components {
            switch (component, current) {
            case (.key(let key), .object(let members)):
                guard let next = members[key] else { return nil }
                current = next
            case (.index(let index), .array(let elements)):
                guard index < elements.count else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }

    /// The value a path names: for a concrete path the value there; for a pattern, an array of
    /// every match in document order (object members by sorted key), or nil when nothing matches.
    func resolve(_ path: JSONPath) -> StoreValue? {
        guard path.hasWildcard else { return value(at: path.components[...]) }
        var found: [StoreValue] = []
        forEachMatch(of: path.components[...], prefix: []) { _, value in found.append(value) }
        return found.isEmpty ? nil : .array(found)
    }

    /// Calls `body` with the concrete path and value of every location `pattern` names.
    func forEachMatch(
        of pattern: ArraySlice<JSONPath.Component>, prefix: [JSONPath.Component],
        _ body: ([JSONPath.Component], StoreValue) -> Void
    ) {
        guard let first = pattern.first else {
            body(prefix, self)
            return
        }
        let rest = pattern.dropFirst()
        switch (first, self) {
        case (.key(let key), .object(let members)):
            members[key]?.forEachMatch(of: rest, prefix: prefix + [first], body)
        case (.index(let index), .array(let elements)) where index < elements.count:
            elements[index].forEachMatch(of: rest, prefix: prefix + [first], body)
        case (.wildcard, .array(let elements)):
            for (index, element) in elements.enumerated() {
                element.forEachMatch(of: rest, prefix: prefix + [.index(index)], body)
            }
        case (.wildcard, .object(let members)):
            for key in members.keys.sorted() {
                members[key]!.forEachMatch(of: rest, prefix: prefix + [.key(key)], body)
            }
        default:
            return
        }
    }

    /// Writes `new` at `path` (or removes what is there when `new` is nil) and returns what was there.
    ///
    /// Removing an absent value (under a missing parent, or past a value of another kind) does
    /// nothing and returns nil.
    /// - Throws: ``StoreError`` with ``StoreError/Code/typeMismatch``, ``StoreError/Code/indexOutOfRange``
    ///   or ``StoreError/Code/wildcardWrite``; the tree is unchanged when it throws.
    mutating func write(_ new: StoreValue?, at path: JSONPath) throws(StoreError) -> StoreValue? {
        var created: Int?
        return try write(new, at: path, created: &created)
    }

    /// Writes like ``write(_:at:)`` and sets `created` to the index of the first step that did not
    /// exist and was created as a parent (nil when every parent existed), so the write can be undone
    /// by removing that step.
    mutating func write(_ new: StoreValue?, at path: JSONPath, created: inout Int?) throws(StoreError) -> StoreValue? {
        let components = path.components
        guard !components.isEmpty else {
            let old = self
            self = new ?? .object([:])
            return old
        }
        // The common case, a top-level key, without the general walk.
        if components.count == 1, case .key(let key) = components[0], case .object(var members) = self {
            self = .null  // keeps `members` uniquely referenced while it is changed
            defer { self = .object(members) }
            guard let new else { return members.removeValue(forKey: key) }
            return members.updateValue(new, forKey: key)
        }
        return try write(new, at: components[...], path: path, created: &created)
    }

    private mutating func write(
        _ new: StoreValue?, at components: ArraySlice<JSONPath.Component>, path: JSONPath, created: inout Int?
    ) throws(StoreError) -> StoreValue? {
        let step = components.first!
        let rest = components.dropFirst()
        switch step {
        case .wildcard:
            throw StoreError(.wildcardWrite, keyPath: path.description, "a write needs a concrete path, not a pattern")
        case .key(let key):
            guard case .object(var members) = self else {
                if new == nil { return nil }
                throw mismatch(path, depth: path.components.count - components.count, expected: "an object")
            }
            self = .null  // keeps `members` uniquely referenced while it is changed
            defer { self = .object(members) }
            if rest.isEmpty {
                guard let new else { return members.removeValue(forKey: key) }
                return members.updateValue(new, forKey: key)
            }
            if let index = members.index(forKey: key) {
                // One hash of the key: the member is changed in place through its index.
                return try members.values[index].write(new, at: rest, path: path, created: &created)
            }
            guard new != nil else { return nil }
            var member = Self.emptyContainer(for: rest.first!)
            var createdBelow = created
            let old = try member.write(new, at: rest, path: path, created: &createdBelow)
            members[key] = member
            created = created ?? path.components.count - components.count
            return old
        case .index(let index):
            guard case .array(var elements) = self else {
                if new == nil { return nil }
                throw mismatch(path, depth: path.components.count - components.count, expected: "an array")
            }
            self = .null
            defer { self = .array(elements) }
            if rest.isEmpty {
                guard let new else { return index < elements.count ? elements.remove(at: index) : nil }
                if index < elements.count {
                    let old = elements[index]
                    elements[index] = new
                    return old
                }
                guard index == elements.count else {
                    throw outOfRange(path, depth: path.components.count - 1, elements.count)
                }
                elements.append(new)
                return nil
            }
            var createdHere = false
            if index >= elements.count {
                guard new != nil else { return nil }
                guard index == elements.count else {
                    throw outOfRange(path, depth: path.components.count - components.count, elements.count)
                }
                elements.append(Self.emptyContainer(for: rest.first!))
                createdHere = true
                if created == nil { created = path.components.count - components.count }
            }
            do {
                return try elements[index].write(new, at: rest, path: path, created: &created)
            } catch {
                if createdHere { elements.removeLast() }
                throw error
            }
        }
    }

    /// What a missing intermediate step becomes: an array when the next step is index 0, else an object.
    private static func emptyContainer(for next: JSONPath.Component) -> StoreValue {
        if case .index = next { return .array([]) }
        return .object([:])
    }

    private func mismatch(_ path: JSONPath, depth: Int, expected: String) -> StoreError {
        let location = JSONPath(components: Array(path.components.prefix(depth)))
        let place = depth == 0 ? "the root" : location.description
        return StoreError(.typeMismatch, keyPath: path.description, "\(place) is \(article(kindName)), not \(expected)")
    }

    private func outOfRange(_ path: JSONPath, depth: Int, _ count: Int) -> StoreError {
        let location = JSONPath(components: Array(path.components.prefix(depth)))
        let index = path.components[depth]
        let indexText: String
        if case .index(let value) = index { indexText = "\(value)" } else { indexText = "?" }
        return StoreError(
            .indexOutOfRange, keyPath: path.description,
            "index \(indexText) is out of range: \(location) has \(count) element\(count == 1 ? "" : "s") (a write may append at index \(count))"
        )
    }

    private func article(_ kind: String) -> String {
        kind == "array" || kind == "object" || kind == "integer" || kind == "url" ? "an \(kind)" : "a \(kind)"
    }
}

extension StoreValue {
    /// The result of applying `patch` to `target` as a JSON Merge Patch (RFC 7396): a `.null`
    /// member removes the key, an object member merges recursively, anything else replaces;
    /// a target that is not an object is replaced by the merge of the patch into an empty object.
    static func mergePatch(_ target: StoreValue?, _ patch: [String: StoreValue]) -> StoreValue {
        var result = target?.objectValue ?? [:]
        for (key, value) in patch {
            switch value {
            case .null: result.removeValue(forKey: key)
            case .object(let members): result[key] = mergePatch(result[key], members)
            default: result[key] = value
            }
        }
        return .object(result)
    }
}
