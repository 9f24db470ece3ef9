import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Signing in to the dashboard and reading its pages through a HummingbirdTesting client.
enum DashboardClient {
    /// Signs in with `token`.
    /// - Returns: the `Cookie` header value of the session.
    static func signIn(_ client: any TestClientProtocol, token: String = RouterHarness.adminToken) async throws
        -> String
    {
        let response = try await client.execute(
            uri: "/dashboard/sign-in", method: .post, headers: form,
            body: ByteBuffer(string: "token=\(QueryParameters.encoded(token))&next=%2Fdashboard"))
        guard response.status == .seeOther, let setCookie = response.headers[.setCookie],
            let pair = setCookie.split(separator: ";").first
        else { throw TestFailure("sign-in answered \(response.status) without a session cookie") }
        return String(pair)
    }

    static var form: HTTPFields {
        var headers = HTTPFields()
        headers[.contentType] = "application/x-www-form-urlencoded"
        return headers
    }

    static func cookie(_ value: String) -> HTTPFields {
        var headers = HTTPFields()
        headers[.cookie] = value
        return headers
    }

    /// The page at `uri` with the session cookie; fails unless it answers `status`.
    static func page(
        _ client: any TestClientProtocol, _ uri: String, cookie: String, status: HTTPResponse.Status = .ok
    ) async throws -> String {
        let response = try await client.execute(uri: uri, method: .get, headers: Self.cookie(cookie))
        #expect(response.status == status, "\(uri)")
        #expect(response.headers[.contentType] == "text/html; charset=utf-8", "\(uri)")
        return String(buffer: response.body)
    }
}

extension String {
    /// The text between `start` and the next `end` after it, or nil.
    func between(_ start: String, _ end: String) -> String? {
        guard let lower = range(of: start), let upper = self[lower.upperBound...].range(of: end) else { return nil }
        return String(self[lower.upperBound..<upper.lowerBound])
    }

    /// How many times `needle` occurs.
    func occurrences(of needle: String) -> Int {
        components(separatedBy: needle).count - 1
    }
}
