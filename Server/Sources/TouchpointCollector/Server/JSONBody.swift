import Foundation
import Hummingbird
import TouchpointCore

/// A request's JSON object body, with its members read and refused by name.
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
        self.members = members
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
            return DashboardFormat.formFields(text.hasPrefix("?") ? String(text.dropFirst()) : text)
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
