import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTPS without a proxy (`--tls-cert`, `--tls-key`) and the `/metrics` token, against the real
/// server over 127.0.0.1. The certificate is made by the test with `openssl`; the client is
/// `curl`, trusting only that certificate. Both are installed by `.ci/run`.
@Suite(.serialized)
struct TLSTests {
    /// Runs a tool to its end without holding a thread of the test pool; its output goes to a
    /// file, so nothing else that holds the pipe open can keep the read from ending.
    static func run(_ tool: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let result = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), [tool] + arguments, timeout: 60)
        return (result.status, result.output)
    }

    /// A self-signed certificate for 127.0.0.1 and its key, in `directory`.
    static func makeCertificate(in directory: TemporaryDirectory) async throws -> CollectorTLS {
        let certificate = directory.appending("cert.pem").path
        let key = directory.appending("key.pem").path
        let made = try await run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out",
                certificate,
            ])
        guard made.status == 0 else { throw TestFailure("openssl req failed with \(made.status)") }
        return CollectorTLS(certificateChainPath: certificate, privateKeyPath: key)
    }

    static func withCollector(
        tls: CollectorTLS?, metricsToken: String? = nil, _ body: (RunningCollector) async throws -> Void
    ) async throws {
        try await CollectorUnderTest.run(
            prefix: "tls-collector",
            configure: {
                $0.tls = tls
                $0.metricsToken = metricsToken
                $0.logger.logLevel = .critical
            }, body)
    }

    @Test func theCollectorServesHTTPSWithTheGivenCertificate() async throws {
        let directory = try TemporaryDirectory(prefix: "tls-files")
        let tls = try await Self.makeCertificate(in: directory)
        try await Self.withCollector(tls: tls) { collector in
            let base = "https://127.0.0.1:\(collector.port)"
            #expect(collector.baseURL.absoluteString == base)
            let health = try await Self.run(
                "curl", ["-sS", "--max-time", "20", "--cacert", tls.certificateChainPath, "\(base)/health"])
            #expect(health.status == 0)
            #expect(health.output.contains("\"status\":\"ok\""), "\(health.output)")

            // An event over HTTPS is stored.
            let sent = try await Self.run(
                "curl",
                [
                    "-sS", "--max-time", "20", "--cacert", tls.certificateChainPath, "-u", "\(collector.writeKey):",
                    "-H", "Content-Type: application/json", "--data",
                    #"{"batch":[{"type":"track","event":"Over TLS","messageId":"tls-1","anonymousId":"a"}]}"#,
                    "\(base)/v1/batch",
                ])
            #expect(sent.output.contains("\"success\":true"), "\(sent.output)")
            #expect(try await collector.services.query.counts(source: "default").events == 1)

            // Without trusting the certificate, curl refuses it: the server really speaks TLS with it.
            let untrusted = try await Self.run("curl", ["-sS", "--max-time", "20", "\(base)/health"])
            #expect(untrusted.status != 0)
            // And plain HTTP to the TLS port gets no HTTP answer.
            let plain = try await Self.run(
                "curl", ["-sS", "--max-time", "20", "http://127.0.0.1:\(collector.port)/health"])
            #expect(!plain.output.contains("\"status\":\"ok\""))
        }
    }

    /// `touchpoint serve --tls-cert … --tls-key …` says where it listens as a client must call it.
    @Test func serveNamesHTTPSURLsWhenItServesTLS() async throws {
        let directory = try TemporaryDirectory(prefix: "tls-serve")
        let tls = try await Self.makeCertificate(in: directory)
        let collector = try await CollectorProcess.start([
            "--data", directory.appending("data").path, "--tls-cert", tls.certificateChainPath, "--tls-key",
            tls.privateKeyPath,
        ])
        let base = "https://127.0.0.1:\(collector.port)"
        let banner = collector.text
        #expect(banner.contains("Touchpoint collector listening on \(base)\n"), "\(banner)")
        #expect(banner.contains("Send events to \(base)/v1/batch"), "\(banner)")
        #expect(banner.contains("Dashboard: \(base)/dashboard"), "\(banner)")
        #expect(!banner.contains("http://"), "\(banner)")
        // The URL it names is the one that answers.
        let health: (status: Int32, output: String)
        do {
            health = try await Self.run(
                "curl", ["-sS", "--max-time", "20", "--cacert", tls.certificateChainPath, "\(base)/health"])
        } catch {
            _ = try? await collector.terminate()
            throw error
        }
        #expect(health.output.contains("\"status\":\"ok\""), "\(health.output)")
        #expect(try await collector.terminate() == 0)
    }

    @Test func aCollectorWithoutTLSNamesHTTPURLs() async throws {
        try await Self.withCollector(tls: nil) { collector in
            #expect(collector.baseURL.absoluteString == "http://127.0.0.1:\(collector.port)")
        }
    }

    @Test func aCertificateOrKeyThatCannotBeReadIsNamedAtStart() async throws {
        let directory = try TemporaryDirectory(prefix: "tls-bad")
        let tls = try await Self.makeCertificate(in: directory)
        let missing = directory.appending("missing.pem").path
        await #expect {
            try await Self.withCollector(
                tls: CollectorTLS(certificateChainPath: missing, privateKeyPath: tls.privateKeyPath)
            ) { _ in }
        } throws: { error in
            (error as? CollectorError)?.message.hasPrefix("the TLS certificate \(missing) (--tls-cert) cannot be read")
                == true
        }
        // The key given as the certificate: not a certificate.
        await #expect {
            try await Self.withCollector(
                tls: CollectorTLS(certificateChainPath: tls.privateKeyPath, privateKeyPath: tls.privateKeyPath)
            ) { _ in }
        } throws: { error in
            (error as? CollectorError)?.message.hasPrefix("the TLS certificate") == true
        }
        await #expect {
            try await Self.withCollector(
                tls: CollectorTLS(
                    certificateChainPath: tls.certificateChainPath, privateKeyPath: tls.certificateChainPath)
            ) { _ in }
        } throws: { error in
            (error as? CollectorError)?.message.hasPrefix("the TLS private key \(tls.certificateChainPath) (--tls-key)")
                == true
        }
    }

    @Test func aMetricsTokenClosesMetricsToEveryoneElse() async throws {
        let token = "metrics-token-0123456789"
        try await Self.withCollector(tls: nil, metricsToken: token) { collector in
            let url = collector.baseURL.appendingPathComponent("metrics")
            var request = URLRequest(url: url)
            let (_, open) = try await URLSession.shared.data(for: request)
            #expect((open as? HTTPURLResponse)?.statusCode == 401)
            request.setValue("Bearer wrong-token-0123456789", forHTTPHeaderField: "Authorization")
            let (_, wrong) = try await URLSession.shared.data(for: request)
            #expect((wrong as? HTTPURLResponse)?.statusCode == 401)
            // The admin token is not the metrics token.
            request.setValue("Bearer \(collector.adminToken)", forHTTPHeaderField: "Authorization")
            let (_, admin) = try await URLSession.shared.data(for: request)
            #expect((admin as? HTTPURLResponse)?.statusCode == 401)
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (body, right) = try await URLSession.shared.data(for: request)
            #expect((right as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: body, as: UTF8.self).contains("touchpoint_requests_total"))
            // /health stays open for load balancers.
            let (_, health) = try await URLSession.shared.data(from: collector.baseURL.appendingPathComponent("health"))
            #expect((health as? HTTPURLResponse)?.statusCode == 200)
        }
        // Without a token, /metrics is open (the default on 127.0.0.1).
        try await Self.withCollector(tls: nil) { collector in
            let (_, open) = try await URLSession.shared.data(from: collector.baseURL.appendingPathComponent("metrics"))
            #expect((open as? HTTPURLResponse)?.statusCode == 200)
        }
    }

    @Test func aShortMetricsTokenIsRefusedAtStart() async throws {
        await #expect {
            try await Self.withCollector(tls: nil, metricsToken: "short") { _ in }
        } throws: { error in
            (error as? CollectorError)?.message.contains(
                "the metrics token (--metrics-token, TOUCHPOINT_METRICS_TOKEN)")
                == true
        }
    }
}
