import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Guessing the admin token, through the API and the dashboard's sign-in, over real sockets:
/// ten wrong guesses a minute per address, then `429` with `Retry-After`. Each request has a
/// connection of its own, so parallel guesses reach the server at once. Time is a manual clock.
struct GuessLimitTests {
    static func limiter(_ clock: ManualClock) -> FailedAttemptLimiter {
        FailedAttemptLimiter(maximumFailures: 3, window: 60, clock: clock, logger: Logger(label: "test"))
    }

    @Test func anAddressIsBlockedAfterItsFailuresUntilTheWindowPasses() throws {
        let clock = ManualClock()
        let limiter = Self.limiter(clock)
        for _ in 0..<3 { #expect(try limiter.attempt("token", from: "10.0.0.1") { false } == false) }
        clock.advance(by: 20)
        #expect(throws: CollectorError.self) { try limiter.attempt("token", from: "10.0.0.1") { true } }
        do {
            _ = try limiter.attempt("token", from: "10.0.0.1") { true }
        } catch {
            #expect(error.code == .tooManyRequests)
            #expect(error.retryAfter == 40)
            #expect(error.message == "too many wrong attempts at the token from this address; try again in 40 s")
        }
        // Another address is not affected.
        #expect(try limiter.attempt("token", from: "10.0.0.2") { true })
        clock.advance(by: 40)
        #expect(try limiter.attempt("token", from: "10.0.0.1") { true })
    }

    @Test func addressesWhoseWindowPassedAreForgotten() throws {
        let clock = ManualClock()
        let limiter = Self.limiter(clock)
        for index in 0..<FailedAttemptLimiter.pruneThreshold {
            _ = try limiter.attempt("token", from: "10.1.\(index / 256).\(index % 256)") { false }
        }
        #expect(limiter.trackedAddresses == FailedAttemptLimiter.pruneThreshold)
        clock.advance(by: 61)
        _ = try limiter.attempt("token", from: "10.9.9.9") { false }
        #expect(limiter.trackedAddresses == 1)
    }

    @Test func rightAttemptsAreNotCounted() throws {
        let limiter = Self.limiter(ManualClock())
        for _ in 0..<10 { #expect(try limiter.attempt("token", from: "10.0.0.1") { true }) }
        for _ in 0..<3 { _ = try limiter.attempt("token", from: "10.0.0.1") { false } }
        #expect(throws: CollectorError.self) { try limiter.attempt("token", from: "10.0.0.1") { true } }
    }

    @Test func attemptsInFlightCountBeforeTheyFail() throws {
        // An attempt is counted as it begins: three still running block a fourth.
        let limiter = Self.limiter(ManualClock())
        var blocked = false
        _ = try limiter.attempt("token", from: "a") {
            (try? limiter.attempt("token", from: "a") {
                (try? limiter.attempt("token", from: "a") {
                    do { _ = try limiter.attempt("token", from: "a") { true } } catch { blocked = true }
                    return false
                }) ?? false
            }) ?? false
        }
        #expect(blocked)
    }

    @Test func theQueryAPIRefusesGuessersWith429AndRetryAfter() async throws {
        let clock = ManualClock()
        try await CollectorUnderTest.run(prefix: "guess-api", configure: { $0.clock = clock }) { collector in
            let client = LiveClient(port: collector.port)
            let counts = "/v1/query/counts"
            // A request without a token is not a guess: any number of them stay 401.
            for _ in 0..<15 {
                #expect(try await client.send(method: "GET", path: counts).status == 401)
            }
            // Parallel guesses, each on a connection of its own, cannot slip past the count: of 30
            // at once, at most 10 are judged.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<30 {
                    group.addTask {
                        try await client.send(method: "GET", path: counts, headers: Self.bearer("wrong-token-\(index)"))
                            .status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 401 }.count == 10)
            #expect(statuses.filter { $0 == 429 }.count == 20)

            // Blocked: even the right token waits.
            let blocked = try await client.send(method: "GET", path: counts, headers: Self.bearer(collector.adminToken))
            #expect(blocked.status == 429)
            #expect(blocked.headers["retry-after"] == "60")
            #expect(try JSONParser.parse(blocked.body)["code"] == "too_many_requests")

            clock.advance(by: 60)
            let allowed = try await client.send(method: "GET", path: counts, headers: Self.bearer(collector.adminToken))
            #expect(allowed.status == 200)
        }
    }

    @Test func theDashboardSignInRefusesGuessersWith429() async throws {
        let clock = ManualClock()
        try await CollectorUnderTest.run(prefix: "guess-sign-in", configure: { $0.clock = clock }) { collector in
            let client = LiveClient(port: collector.port)
            let form = [("Content-Type", "application/x-www-form-urlencoded")]
            func signIn(_ token: String) async throws -> LiveClient.Response {
                try await client.send(
                    method: "POST", path: "/dashboard/sign-in", headers: form,
                    body: Array("token=\(token)&next=%2Fdashboard".utf8))
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<12 {
                    group.addTask { try await signIn("wrong-\(index)").status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 401 }.count == 10)
            #expect(statuses.filter { $0 == 429 }.count == 2)
            let blocked = try await signIn(collector.adminToken)
            #expect(blocked.status == 429)
            #expect(blocked.headers["retry-after"] != nil)
            #expect(blocked.text.contains("Too many wrong tokens from here"))
            // The API and the dashboard share the count: the address is blocked for both.
            let api = try await client.send(
                method: "GET", path: "/v1/query/counts", headers: Self.bearer(collector.adminToken))
            #expect(api.status == 429)
            clock.advance(by: 61)
            let signedIn = try await signIn(collector.adminToken)
            #expect(signedIn.status == 303 || signedIn.status == 302)
        }
    }

    static func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }
}
