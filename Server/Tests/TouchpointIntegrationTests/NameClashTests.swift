import Foundation
import HTTPTypes
import Testing
import Touchpoint

/// An app that imports Touchpoint beside swift-http-types (directly, or through Hummingbird,
/// async-http-client or an OpenAPI client) names their types without qualifying them: this file
/// compiles only while `import Touchpoint` brings no `HTTPRequest`, `HTTPResponse` or
/// `HTTPFields` of its own.
struct NameClashTests {
    @Test func swiftHTTPTypesNamesStayUnambiguousBesideTouchpoint() throws {
        var request = HTTPRequest(method: .post, scheme: "https", authority: "collector.example.com", path: "/v1/batch")
        request.headerFields[.contentType] = "application/json"
        let response = HTTPResponse(status: .ok)
        #expect(request.method == .post)
        #expect(response.status.code == 200)
        // And Touchpoint's own transport types, by their names.
        let ours = TransportRequest(method: .post, url: try #require(URL(string: "https://collector.example.com")))
        #expect(ours.method == TransportMethod.post)
    }
}
