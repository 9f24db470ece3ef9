import Foundation
import TouchpointCore

extension JSONValue {
    /// The value as the plain Swift value an analytics SDK expects in a `[String: Any]`:
    /// `String`, `Int`, `Double`, `Bool`, `[Any]`, `[String: Any]`, and `NSNull` for `null`.
    public var plainValue: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let value): return value
        case .int(let value): return value
        case .double(let value): return value
        case .string(let value): return value
        case .array(let elements): return elements.map(\.plainValue)
        case .object(let members): return members.mapValues(\.plainValue)
        }
    }
}
