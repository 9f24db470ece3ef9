/// A location inside a JSON document, written the way users read it: `surveys[1].trigger.event.name`.
///
/// Validators build paths as they walk a document and attach them to every problem they
/// report, so an error names exactly where the bad value is.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    /// One step into a document.
    public enum Component: Sendable, Hashable {
        /// An object member.
        case key(String)
        /// An array element.
        case index(Int)
        /// Any one step: every element of an array or every member of an object (`items[*].price`).
        /// Paths that hold one are patterns, used to select or observe many values at once.
        case wildcard
    }

    /// The steps from the root.
    public var components: [Component]

    /// The document's root; described as `$` when empty.
    public static let root = JSONPath(components: [])

    public init(components: [Component] = []) { self.components = components }

    /// This path extended by an object member.
    public func appending(_ key: String) -> JSONPath {
        JSONPath(components: components + [.key(key)])
    }

    /// This path extended by an array element.
    public func appending(index: Int) -> JSONPath {
        JSONPath(components: components + [.index(index)])
    }

    /// The path as text. Keys that are not plain identifiers are quoted: `tagline["pt-BR"]`;
    /// ``JSONPath/init(parsing:)`` reads every description back to the same path.
    public var description: String {
        guard !components.isEmpty else { return "$" }
        var text = ""
        for component in components {
            switch component {
            case .index(let index):
                text += "[\(index)]"
            case .wildcard:
                text += "[*]"
            case .key(let key):
                if Self.isPlainIdentifier(key) {
                    if !text.isEmpty { text += "." }
                    text += key
                } else {
                    text += "[" + JSONValue.string(key).jsonString() + "]"
                }
            }
        }
        return text
    }

    private static func isPlainIdentifier(_ key: String) -> Bool {
        // A lone "$" would read back as the root.
        guard key != "$", let first = key.unicodeScalars.first, isIdentifierStart(first) else { return false }
        return key.unicodeScalars.allSatisfy(isIdentifierContinue)
    }

    /// Whether a plain (unquoted) key may start with `scalar`.
    static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar == "$" || scalar.properties.isAlphabetic
    }

    /// Whether a plain (unquoted) key may continue with `scalar`.
    static func isIdentifierContinue(_ scalar: Unicode.Scalar) -> Bool {
        isIdentifierStart(scalar) || ("0"..."9").contains(scalar)
    }
}

/// One thing wrong with a JSON document: where, and why.
public struct JSONProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where in the document.
    public var path: JSONPath
    /// Why it is wrong, e.g. `unknown operator "gtt"`.
    public var message: String

    public init(path: JSONPath, message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`, e.g. `surveys[1].trigger.event.properties.amount.op: unknown operator "gtt"`.
    public var description: String { "\(path): \(message)" }
}
