import Foundation

/// Checking one value against one rule, and the lenient fixes.
extension ValidationRule {
    /// Why `value` breaks this rule, or nil when it does not. `nil` means the path holds nothing.
    func violation(of value: StoreValue?, regex: NSRegularExpression?) -> String? {
        guard let value, value != .null else {
            return required ? "is required" + (value == nil ? "" : " (found null)") : nil
        }
        guard Self.accepts(kind, value) else {
            return "expected \(kind.rawValue), found \(value.kindName) \(Self.excerpt(value))"
        }
        if let measure = Self.measure(value) {
            let unit = Self.unit(value)
            if let min, measure.value < min {
                return "\(measure.label) \(Self.format(measure.value))\(unit) is below the minimum \(Self.format(min))"
            }
            if let max, measure.value > max {
                return "\(measure.label) \(Self.format(measure.value))\(unit) is above the maximum \(Self.format(max))"
            }
        }
        if pattern != nil, let text = value.stringValue {
            guard let regex else {
                return "the rule's pattern \(Self.excerpt(.string(pattern!))) is not a valid regular expression"
            }
            let range = NSRange(text.startIndex..., in: text)
            guard let match = regex.firstMatch(in: text, options: [.anchored], range: range), match.range == range
            else {
                return "\(Self.excerpt(value)) does not match the pattern \(pattern!)"
            }
        }
        return nil
    }

    /// The lenient fix for a value that breaks this rule: a coercion when one keeps the meaning,
    /// else the default; nil when there is neither.
    func fix(_ value: StoreValue?, regex: NSRegularExpression?) -> StoreValue? {
        if let value, value != .null, let coerced = coerce(value), violation(of: coerced, regex: regex) == nil {
            return coerced
        }
        if let defaultValue, violation(of: defaultValue, regex: regex) == nil { return defaultValue }
        return nil
    }

    /// `value` converted to this rule's kind (and clamped into `min...max` for numbers).
    func coerce(_ value: StoreValue) -> StoreValue? {
        var converted: StoreValue?
        switch (kind, value) {
        case (.integer, .integer), (.number, .number), (.number, .integer), (.string, .string), (.bool, .bool),
            (.array, .array), (.object, .object), (.color, .color), (.url, .url):
            converted = value
        case (.integer, .number(let number)):
            converted = Int(exactly: number).map(StoreValue.integer)
        case (.integer, .string(let text)):
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            converted =
                Int(trimmed).map(StoreValue.integer)
                ?? Double(trimmed).flatMap(Int.init(exactly:)).map(StoreValue.integer)
        case (.number, .string(let text)):
            converted = Double(text.trimmingCharacters(in: .whitespaces)).flatMap { $0.isFinite ? .number($0) : nil }
        case (.string, .integer(let number)):
            converted = .string(String(number))
        case (.string, .number(let number)) where number.isFinite:
            converted = .string(number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : String(number))
        case (.string, .bool(let flag)):
            converted = .string(flag ? "true" : "false")
        case (.string, .color(let text)), (.string, .url(let text)):
            converted = .string(text)
        case (.bool, .string(let text)):
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "true", "yes", "1": converted = .bool(true)
            case "false", "no", "0": converted = .bool(false)
            default: converted = nil
            }
        case (.bool, .integer(let number)) where number == 0 || number == 1:
            converted = .bool(number == 1)
        case (.color, .string(let text)) where Self.isColor(text):
            converted = .color(text)
        case (.url, .string(let text)) where Self.isURL(text):
            converted = .url(text)
        default:
            converted = nil
        }
        return converted.map(clamp)
    }

    /// Numbers moved into `min...max`; other values unchanged.
    private func clamp(_ value: StoreValue) -> StoreValue {
        switch value {
        case .integer(let number) where kind == .number:
            let clamped = clamp(.number(Double(number)))
            return clamped == .number(Double(number)) ? value : clamped
        case .integer(let number):
            var result = number
            if let min, Double(result) < min, let bound = Int(exactly: min.rounded(.up)) { result = bound }
            if let max, Double(result) > max, let bound = Int(exactly: max.rounded(.down)) { result = bound }
            return .integer(result)
        case .number(let number):
            var result = number
            if let min, result < min { result = min }
            if let max, result > max { result = max }
            return .number(result)
        default:
            return value
        }
    }

    static func accepts(_ kind: Kind, _ value: StoreValue) -> Bool {
        switch (kind, value) {
        case (.string, .string), (.integer, .integer), (.number, .number), (.number, .integer), (.bool, .bool),
            (.array, .array), (.object, .object):
            return true
        case (.color, .color(let text)):
            return isColor(text)
        case (.url, .url(let text)):
            return isURL(text)
        default:
            return false
        }
    }

    /// `#RGB`, `#RGBA`, `#RRGGBB` or `#RRGGBBAA`, hex digits in either case.
    static func isColor(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        guard utf8.first == UInt8(ascii: "#"), [4, 5, 7, 9].contains(utf8.count) else { return false }
        return utf8.dropFirst().allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }

    /// A URL with a scheme, such as `https://acme.example/x` or `mailto:a@b.example`.
    static func isURL(_ text: String) -> Bool {
        guard !text.isEmpty, !text.contains(where: \.isWhitespace), let url = URL(string: text) else { return false }
        return url.scheme?.isEmpty == false
    }

    private static func measure(_ value: StoreValue) -> (label: String, value: Double)? {
        switch value {
        case .integer(let number): return ("value", Double(number))
        case .number(let number): return ("value", number)
        case .string(let text): return ("length", Double(text.count))
        case .array(let elements): return ("length", Double(elements.count))
        case .object(let members): return ("size", Double(members.count))
        default: return nil
        }
    }

    private static func unit(_ value: StoreValue) -> String {
        switch value {
        case .string: return " characters"
        case .array: return " elements"
        case .object: return " members"
        default: return ""
        }
    }

    static func format(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }

    static func excerpt(_ value: StoreValue) -> String {
        let text = value.jsonString(sortedKeys: true)
        return text.count > 40 ? String(text.prefix(37)) + "…" : text
    }
}
