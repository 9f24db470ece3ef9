import Foundation
import Testing
import TouchpointCore

struct HTTPHelpersTests {
    @Test func basicAuthorizationEncodesUserColonPassword() {
        #expect(TransportHeaders.basicAuthorization(user: "key") == "Basic a2V5Og==")
        #expect(
            TransportHeaders.basicAuthorization(user: "Aladdin", password: "open sesame")
                == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
    }

    @Test func bodyExcerptIsOneLineAndMarksACut() {
        let url = URL(string: "http://127.0.0.1/")!
        #expect(TransportResponse(status: 500, url: url).bodyExcerpt() == "")
        #expect(TransportResponse(status: 500, body: Array("a\r\nb".utf8), url: url).bodyExcerpt() == "a  b")
        let long = TransportResponse(status: 500, body: Array(repeating: UInt8(ascii: "x"), count: 300), url: url)
        #expect(long.bodyExcerpt() == String(repeating: "x", count: 200) + "…")
        #expect(long.bodyExcerpt(limit: 300) == String(repeating: "x", count: 300))
    }
}
