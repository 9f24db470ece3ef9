import Foundation
import Hummingbird
import TouchpointCore

/// A request's JSON object body, with its members read and refused by name.
///
/// A string holding a NUL character (`\u0000`) is refused wherever it is, naming its path: no
/// store keeps one in text (PostgreSQL refuses it), so what holds one could never be saved.
struct JSONBody {
    let members: [String: JSONValue]

    init(_ request: Request) async throws {
        let body = try await RequestBodyReader.read(request, limit: 64 * 1024)
        let json: JSONValue
        do {
            json = try JSONParser.parse(Array(buffer: body))
        } catch {
            throw CollectorError(.invalidJSON, "body: \(error)")
        }
        guard case .object(let members) = json else {
            throw CollectorError(.invalidRequest, "body: expected an object, found \(json.typeName)")
        }
        if let path = Self.pathToNUL(json, path: "") {
            throw CollectorError(
                .invalidRequest, "\(path): holds a NUL character (\\u0000), which no store keeps in text",
                path: path)
        }
        self.members = members
    }

    /// The path of the first string (or member name) in `value` that holds a NUL character.
    static func pathToNUL(_ value: JSONValue, path: String) -> String? {
        switch value {
        case .string(let text):
            return text.utf8.contains(0) ? (path.isEmpty ? "body" : path) : nil
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let found = pathToNUL(item, path: "\(path)[\(index)]") { return found }
            }
            return nil
        case .object(let members):
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                let inner = path.isEmpty ? name : "\(path).\(name)"
                if name.utf8.contains(0) { return inner }
                if let found = pathToNUL(member, path: inner) { return found }
            }
            return nil
        default:
            return nil
        }
    }

    /// An optional string member.
    func string(_ name: String) throws -> String? {
        guard let value = members[name] else { return nil }
        guard case .string(let text) = value else {
            throw CollectorError(.invalidRequest, "\(name): expected a string, found \(value.typeName)", path: name)
        }
        return text
    }

    /// An optional array of numbers.
    func ids(_ name: String) throws -> [Int64]? {
        guard let value = members[name] else { return nil }
        guard case .array(let items) = value else {
            throw CollectorError(
                .invalidRequest, "\(name): expected an array of numbers, found \(value.typeName)", path: name)
        }
        return try items.enumerated().map { index, item in
            guard let number = item.intValue, item.doubleValue == Double(number) else {
                throw CollectorError(
                    .invalidRequest, "\(name)[\(index)]: expected a number, found \(item.typeName)",
                    path: "\(name)[\(index)]")
            }
            return Int64(number)
        }
    }

    /// The optional `parameters`: an object of strings, or a query string (`steps=a,b&window=1d`).
    func parameters() throws -> [String: String]? {
        switch members["parameters"] {
        case nil: return nil
        case .string(let text)?:
            // As a query: a name sent twice keeps its first value.
            return try QueryParameters(text.hasPrefix("?") ? String(text.dropFirst()) : text).dictionary
        case .object(let values)?:
            return try values.mapValues { value in
                switch value {
                case .string(let text): return text
                case .int, .double: return value.jsonString()
                default:
                    throw CollectorError(
                        .invalidRequest, "parameters: expected strings, found \(value.typeName)", path: "parameters")
                }
            }
        case let other?:
            throw CollectorError(
                .invalidRequest, "parameters: expected an object or a query string, found \(other.typeName)",
                path: "parameters")
        }
    }
}
