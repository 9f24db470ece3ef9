import Testing
import TouchpointCore

@testable import TouchpointTesting

struct HTTPRequestParserTests {
    func parseAll(_ text: String, splitEvery step: Int? = nil) throws -> [HTTPRequestParser.Parsed] {
        var parser = HTTPRequestParser()
        let bytes = Array(text.utf8)
        var requests: [HTTPRequestParser.Parsed] = []
        var offset = 0
        let size = step ?? bytes.count
        while offset < bytes.count {
            parser.append(bytes[offset..<min(bytes.count, offset + size)])
            offset += size
            while let request = try parser.next() { requests.append(request) }
        }
        #expect(parser.isIdle)
        return requests
    }

    static let pipelined =
        "POST /v1/batch?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nX-Test:  padded  \r\n\r\nhello"
        + "PUT /chunked HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "4;ext=1\r\nWiki\r\n6\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\n"
        + "GET / HTTP/1.1\r\n\r\n"

    @Test(arguments: [nil, 1, 2, 3, 7, 64])
    func readsPipelinedRequestsWhateverTheSplit(step: Int?) throws {
        let requests = try parseAll(Self.pipelined, splitEvery: step)
        #expect(requests.count == 3)
        #expect(requests[0].method == "POST")
        #expect(requests[0].target == "/v1/batch?x=1")
        #expect(requests[0].headers["x-test"] == "padded")
        #expect(requests[0].body == Array("hello".utf8))
        #expect(requests[1].body == Array("Wikipedia in \r\n\r\nchunks.".utf8))
        #expect(requests[2].method == "GET")
        #expect(requests[2].body.isEmpty)
    }

    @Test(arguments: [
        ("GARBAGE\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nbad header\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n", 400),
        ("POST / HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n", 413),
    ])
    func rejectsMalformedRequests(text: String, status: Int) {
        var parser = HTTPRequestParser(maximumHeadBytes: 1024, maximumBodyBytes: 1_000_000)
        parser.append(Array(text.utf8)[...])
        #expect(throws: HTTPRequestParser.Failure.self) { _ = try parser.next() }
        do {
            _ = try parser.next()
        } catch {
            #expect(error.status == status)
        }
    }

    @Test func rejectsAnOversizedHead() {
        var parser = HTTPRequestParser(maximumHeadBytes: 100)
        parser.append(Array(("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 200)).utf8)[...])
        #expect(throws: HTTPRequestParser.Failure(status: 431, reason: "request head over 100 bytes")) {
            _ = try parser.next()
        }
    }

    @Test func rejectsAChunkedBodyOverTheLimit() {
        var parser = HTTPRequestParser(maximumBodyBytes: 10)
        parser.append(Array("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n".utf8)[...])
        #expect(throws: HTTPRequestParser.Failure.self) { _ = try parser.next() }
    }

    @Test func knowsWhenAClientWaitsFor100Continue() throws {
        var parser = HTTPRequestParser()
        parser.append(Array("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8)[...])
        #expect(try parser.next() == nil)
        #expect(parser.isAwaitingContinue)
        parser.append(Array("abc".utf8)[...])
        #expect(try parser.next()?.body == Array("abc".utf8))
        #expect(!parser.isAwaitingContinue)
    }
}
