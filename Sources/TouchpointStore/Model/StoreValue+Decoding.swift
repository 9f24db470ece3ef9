import Foundation
import TouchpointCore

extension StoreValue {
    /// This value decoded as `T` through its plain JSON form (colors and URLs as strings).
    /// - Throws: ``StoreError`` with ``StoreError/Code/typeMismatch`` naming `keyPath` and the decoder's reason.
    public func decode<T: Decodable>(as type: T.Type, keyPath: String) throws(StoreError) -> T {
        if let value = self as? T { return value }
        do {
            return try JSONDecoder().decode(T.self, from: Data(plainJSONValue.jsonBytes()))
        } catch {
            throw StoreError(
                .typeMismatch, keyPath: keyPath,
                "cannot read \(kindName) \(ValidationRule.excerpt(self)) as \(T.self): \(Self.reason(error))")
        }
    }

    private static func reason(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context),
            .dataCorrupted(let context):
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
