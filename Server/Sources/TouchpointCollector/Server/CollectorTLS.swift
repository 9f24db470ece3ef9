import Foundation
import NIOSSL

/// HTTPS without a proxy: a PEM certificate chain (the server's certificate first) and its
/// private key, read when the collector starts.
///
/// ```swift
/// configuration.tls = CollectorTLS(certificateChainPath: "/etc/touchpoint/cert.pem",
///                                  privateKeyPath: "/etc/touchpoint/key.pem")
/// ```
public struct CollectorTLS: Sendable, Equatable {
    /// The PEM file holding the certificate chain.
    public var certificateChainPath: String
    /// The PEM file holding the private key.
    public var privateKeyPath: String

    /// Names the two files; nothing is read until the collector starts.
    public init(certificateChainPath: String, privateKeyPath: String) {
        self.certificateChainPath = certificateChainPath
        self.privateKeyPath = privateKeyPath
    }

    /// Reads both files into a server configuration (TLS 1.2 and later).
    /// - Throws: a ``CollectorError`` naming the file that cannot be read or parsed.
    func serverConfiguration() throws(CollectorError) -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateChainPath)
        } catch {
            throw CollectorError(
                .invalidConfiguration,
                "the TLS certificate \(certificateChainPath) (--tls-cert) cannot be read as PEM: \(error)")
        }
        guard !chain.isEmpty else {
            throw CollectorError(
                .invalidConfiguration, "the TLS certificate \(certificateChainPath) (--tls-cert) holds no certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: privateKeyPath, format: .pem)
        } catch {
            throw CollectorError(
                .invalidConfiguration,
                "the TLS private key \(privateKeyPath) (--tls-key) cannot be read as PEM: \(error)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }
}
