import Foundation
import TouchpointCore
import TouchpointEvents

#if canImport(CoreFoundation)
import CoreFoundation
#endif

/// The conversion of a ``TrackableEvent``'s `[String: Any]` metadata to the JSON values the log
/// stores, with a list of what could not be converted.
///
/// | Swift value | recorded as |
/// | --- | --- |
/// | `String`, `Substring`, `Character` | string |
/// | `Int` and the other integer types | number (an unsigned value above `Int.max` is a problem) |
/// | `Double`, `Float` | number (NaN and infinities are problems) |
/// | `Bool` | `true` / `false` |
/// | `Date` | ISO-8601 text with milliseconds, UTC |
/// | `URL` | its absolute string |
/// | `NSNumber` | a Boolean, integer or number, as it was created |
/// | `NSNull`, `nil` | `null` |
/// | arrays, dictionaries with `String` keys | array, object (converted element by element) |
/// | ``EventValue``, ``TrackableValueType`` | its ``TrackableValueType/eventValue`` |
///
/// Anything else (a class instance, a struct, a tuple…) is a problem: an object member is left
/// out and an array element becomes `null` (so positions stay), and the problem names the path,
/// e.g. `when.start: a Foo cannot be recorded`.
///
/// ```swift
/// let conversion = MetadataConversion(["name": "My App", "count": 3])
/// conversion.properties  // ["name": .string("My App"), "count": .int(3)]
/// conversion.problems    // []
/// ```
public struct MetadataConversion: Sendable {
    /// The converted values.
    public let properties: [String: EventValue]
    /// What could not be converted, each naming its path.
    public let problems: [JSONProblem]

    /// Converts `metadata`.
    public init(_ metadata: [String: Any]) {
        var problems: [JSONProblem] = []
        var properties: [String: EventValue] = [:]
        properties.reserveCapacity(metadata.count)
        for (key, value) in metadata {
            if let converted = Self.convert(value, at: JSONPath(components: [.key(key)]), &problems) {
                properties[key] = converted
            }
        }
        self.properties = properties
        self.problems = problems
    }

    /// Converts one value, or returns nil when it cannot be recorded.
    public static func value(of value: Any) -> EventValue? {
        var problems: [JSONProblem] = []
        let converted = convert(value, at: .root, &problems)
        return problems.isEmpty ? converted : nil
    }

    static func convert(_ value: Any, at path: JSONPath, _ problems: inout [JSONProblem]) -> EventValue? {
        // NSNumber first: on Linux a Swift number in an `Any` also casts to NSNumber, and an
        // NSNumber casts to Bool, so only a value whose type *is* NSNumber is read as one.
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            return convert(number, at: path, &problems)
        }
        switch value {
        case let text as String: return .string(text)
        case let flag as Bool: return .bool(flag)
        case let number as Int: return .int(number)
        case let number as Double: return finite(number, at: path, &problems)
        case let json as JSONValue: return json
        case let trackable as any TrackableValueType: return trackable.eventValue
        case let date as Date: return .string(Timestamp.format(date))
        case let url as URL: return .string(url.absoluteString)
        case let text as Substring: return .string(String(text))
        case let character as Character: return .string(String(character))
        case is NSNull: return .null
        case let integer as any BinaryInteger:
            guard let exact = Int(exactly: integer) else {
                problems.append(JSONProblem(path: path, message: "\(integer) does not fit in a 64-bit signed integer"))
                return nil
            }
            return .int(exact)
        case let number as any BinaryFloatingPoint: return finite(Double(number), at: path, &problems)
        case let optional as any OptionalValue:
            guard let wrapped = optional.wrappedValue else { return .null }
            return convert(wrapped, at: path, &problems)
        case let members as [String: Any]:
            var object: [String: EventValue] = [:]
            for (key, member) in members {
                if let converted = convert(member, at: path.appending(key), &problems) { object[key] = converted }
            }
            return .object(object)
        case let members as [AnyHashable: Any]:
            var object: [String: EventValue] = [:]
            for (key, member) in members {
                guard let name = key.base as? String else {
                    problems.append(
                        JSONProblem(path: path, message: "the key \(key) is a \(type(of: key.base)), not a String"))
                    continue
                }
                if let converted = convert(member, at: path.appending(name), &problems) { object[name] = converted }
            }
            return .object(object)
        case let elements as [Any]:
            var array: [EventValue] = []
            array.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                array.append(convert(element, at: path.appending(index: index), &problems) ?? .null)
            }
            return .array(array)
        default:
            problems.append(JSONProblem(path: path, message: "a \(type(of: value)) cannot be recorded as JSON"))
            return nil
        }
    }

    private static func finite(_ number: Double, at path: JSONPath, _ problems: inout [JSONProblem]) -> EventValue? {
        guard number.isFinite else {
            problems.append(JSONProblem(path: path, message: "\(number) is not a finite number"))
            return nil
        }
        return .double(number)
    }

    private static func convert(_ number: NSNumber, at path: JSONPath, _ problems: inout [JSONProblem]) -> EventValue? {
        #if canImport(Darwin)
        if CFGetTypeID(number) == CFBooleanGetTypeID() { return .bool(number.boolValue) }
        #endif
        switch String(cString: number.objCType) {
        #if !canImport(Darwin)
        case "c", "B": return .bool(number.boolValue)
        #endif
        case "f", "d": return finite(number.doubleValue, at: path, &problems)
        case "Q", "L", "I", "S", "C":
            guard let exact = Int(exactly: number.uint64Value) else {
                problems.append(JSONProblem(path: path, message: "\(number) does not fit in a 64-bit signed integer"))
                return nil
            }
            return .int(exact)
        default: return .int(number.intValue)
        }
    }
}

/// Lets the converter see through an `Optional` stored in an `Any`.
protocol OptionalValue {
    var wrappedValue: Any? { get }
}

extension Optional: OptionalValue {
    var wrappedValue: Any? {
        switch self {
        case .some(let value): return value
        case .none: return nil
        }
    }
}
