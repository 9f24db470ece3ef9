import Crypto
import Foundation

/// Proof that a request speaks for one user: the app's own backend, which knows who is signed
/// in, signs the user id with the source's identity secret, and the app sends that signature
/// with its requests for the user's documents.
///
/// The signature is HMAC-SHA256 of the user id's UTF-8 bytes, keyed with the secret's UTF-8
/// bytes, in lowercase hex — what any server language computes in a line, e.g.
/// `hmac.new(secret, user_id, hashlib.sha256).hexdigest()` in Python. The write key is public
/// (it ships inside the app); the identity secret never leaves the app's backend and the collector.
public enum IdentityVerification {
    /// The header that carries the signature.
    public static let headerName = "X-Touchpoint-User-Signature"

    /// The signature of `userId` under `secret`: 64 lowercase hex digits.
    public static func signature(userId: String, secret: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(
            for: Data(userId.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return code.map { String(format: "%02x", $0) }.joined()
    }

    /// Whether `signature` is `userId`'s under `secret` (compared in constant time; hex in
    /// either case).
    public static func isValid(_ signature: String, userId: String, secret: String) -> Bool {
        CollectorServices.constantTimeEquals(
            signature.lowercased(), Self.signature(userId: userId, secret: secret))
    }
}
