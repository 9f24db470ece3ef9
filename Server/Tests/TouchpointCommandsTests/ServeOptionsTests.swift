import ArgumentParser
import Foundation
import Testing
import TouchpointCollector

@testable import TouchpointCommands

/// `touchpoint serve --cors-origins` and `--public-url`: what they accept, and what they refuse by name.
struct ServeOptionsTests {
    @Test func corsOriginsAreAListOfOrigins() throws {
        #expect(
            try ServeCommand.origins(" https://shop.example.com, http://127.0.0.1:3000 ,")
                == ["https://shop.example.com", "http://127.0.0.1:3000"])
    }

    @Test(arguments: [
        ("", "--cors-origins: no origin given"),
        ("shop.example.com", "--cors-origins: shop.example.com is not an origin"),
        ("https://shop.example.com/path", "--cors-origins: https://shop.example.com/path is not an origin"),
        ("ftp://shop.example.com", "--cors-origins: ftp://shop.example.com is not an origin"),
        ("https://a.example, *", "--cors-origins: * is not an origin"),
    ])
    func badCORSOriginsAreNamed(text: String, message: String) {
        do {
            let origins = try ServeCommand.origins(text)
            Issue.record("accepted \(origins)")
        } catch let error as ValidationError {
            #expect(error.message.hasPrefix(message), "\(error.message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func thePublicURLNeedsAnHTTPSchemeAndAHost() throws {
        #expect(try ServeCommand.publicURL("https://collector.example.com").host == "collector.example.com")
        for bad in ["collector.example.com", "file:///x", "https://"] {
            #expect(throws: ValidationError.self) { try ServeCommand.publicURL(bad) }
        }
    }

    @Test func tlsNeedsBothTheCertificateAndTheKey() throws {
        #expect(try ServeCommand.tls(certificate: nil, key: nil) == nil)
        #expect(
            try ServeCommand.tls(certificate: "c.pem", key: "k.pem")
                == CollectorTLS(certificateChainPath: "c.pem", privateKeyPath: "k.pem"))
        #expect(throws: ValidationError.self) { try ServeCommand.tls(certificate: "c.pem", key: nil) }
        #expect(throws: ValidationError.self) { try ServeCommand.tls(certificate: nil, key: "k.pem") }
    }

    @Test func anInsightsTimeLimitComesFromTheOptionElseTheEnvironment() throws {
        #expect(try ServeCommand.eventsQueryTimeLimit(nil, environment: nil) == nil)
        #expect(try ServeCommand.eventsQueryTimeLimit(90, environment: "5") == .seconds(90))
        #expect(try ServeCommand.eventsQueryTimeLimit(nil, environment: " 2.5 ") == .milliseconds(2500))
    }

    @Test(
        arguments: [
            (0.5, nil, "--events-query-time-limit: 0.5 is not a number of seconds from 1 to 86400"),
            (1e20, nil, "--events-query-time-limit: 1e+20 is not a number of seconds from 1 to 86400"),
            (.nan, nil, "--events-query-time-limit: nan is not a number of seconds from 1 to 86400"),
            (nil, "-3", "TOUCHPOINT_EVENTS_QUERY_TIME_LIMIT: -3.0 is not a number of seconds from 1 to 86400"),
            (nil, "a minute", "TOUCHPOINT_EVENTS_QUERY_TIME_LIMIT: a minute is not a number of seconds"),
        ] as [(Double?, String?, String)])
    func badInsightTimeLimitsAreNamed(option: Double?, environment: String?, message: String) {
        do {
            let limit = try ServeCommand.eventsQueryTimeLimit(option, environment: environment)
            Issue.record("accepted \(String(describing: limit))")
        } catch let error as ValidationError {
            #expect(error.message == message)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func connectionLimitsComeFromTheirOptionsInSeconds() throws {
        #expect(
            try ServeCommand.connectionLimits(head: nil, body: nil, idle: nil, maximumConnections: nil) == .standard)
        let limits = try ServeCommand.connectionLimits(head: 2.5, body: 5, idle: 0.25, maximumConnections: 64)
        #expect(limits.headTimeout == .milliseconds(2500))
        #expect(limits.bodyTimeout == .seconds(5))
        #expect(limits.idleTimeout == .milliseconds(250))
        #expect(limits.maximumConnections == 64)
    }

    @Test(
        arguments: [
            (0.0, nil, "--head-timeout: 0.0 is not a number of seconds above zero"),
            (-1.0, nil, "--head-timeout: -1.0 is not a number of seconds above zero"),
            (nil, 0, "--max-connections: 0 is not a count above zero"),
        ] as [(Double?, Int?, String)])
    func badConnectionLimitsAreNamed(head: Double?, maximum: Int?, message: String) {
        do {
            let limits = try ServeCommand.connectionLimits(
                head: head, body: nil, idle: nil, maximumConnections: maximum)
            Issue.record("accepted \(limits)")
        } catch let error as ValidationError {
            #expect(error.message == message)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
