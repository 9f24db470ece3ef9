import Testing
import TouchpointCore

@testable import TouchpointCollector

/// The streaming batch reader against the general decoder on bodies chosen for their corners:
/// both must give the same messages, rejections and errors, and the reader must take the
/// ordinary ones itself.
struct StreamingBatchReaderTests {
    static let event =
        #"{"type":"track","event":"e","messageId":"m","anonymousId":"a","timestamp":"2026-01-01T00:00:00Z","properties":{"x":[1,2.5,{"y":null}]},"context":{"sessionId":"s","app":{"v":"1"}}}"#

    static func body(_ elements: String, top: String = "") -> [UInt8] {
        Array(#"{\#(top)"batch":[\#(elements)],"sentAt":"2026-01-01T00:00:01Z"}"#.utf8)
    }

    @Test(
        arguments: [
            // Ordinary, and with whitespace everywhere.
            (body(event), true),
            (
                Array(" {\n \"batch\" : [ \(event) , \(event) ] ,\t\"sentAt\" : \"2026-01-01T00:00:01Z\" } \n".utf8),
                true
            ),
            (body(""), true),
            (body("{}"), true),
            // Repeated members: the last one counts, in the message and in its context.
            (body(#"{"type":"track","event":"e","messageId":"m1","messageId":"m2","anonymousId":"a"}"#), true),
            (
                body(
                    #"{"type":"track","event":"e","messageId":"m","anonymousId":"a","context":{"sessionId":"s1"},"context":{}}"#
                ), true
            ),
            (
                body(
                    #"{"type":"track","event":"e","messageId":"m","anonymousId":"a","context":{"sessionId":"s1","sessionId":2}}"#
                ), true
            ),
            (
                body(
                    #"{"type":"track","event":"e","messageId":"m","anonymousId":"a","properties":[],"properties":{}}"#),
                true
            ),
            (
                body(#"{"type":"track","event":"e","messageId":"m","anonymousId":"a","properties":{},"properties":7}"#),
                true
            ),
            // Member types the decoder rejects, and nulls it accepts.
            (
                body(#"{"type":"track","event":"e","messageId":"m","anonymousId":"a","context":null,"traits":null}"#),
                true
            ),
            (body(#"{"type":"track","event":"e","messageId":"m","anonymousId":"a","context":"s"}"#), true),
            (body(#"{"type":"track","event":"e","messageId":"m","anonymousId":"a","integrations":true}"#), true),
            (body(#"{"type":"track","event":"e","messageId":12,"anonymousId":"a","context":{"sessionId":99}}"#), true),
            (body(#"{"type":"track","event":"e","messageId":"m","userId":""}"#), true),
            (
                body(#"{"type":"screen","messageId":"m","anonymousId":"a","name":"Home","timestamp":"not a time"}"#),
                true
            ),
            // The batch's own context supplies a session id, or a bad one.
            (
                body(
                    #"{"type":"track","event":"e","messageId":"m","anonymousId":"a"}"#,
                    top: #""context":{"sessionId":"top"},"#), true
            ),
            (
                body(
                    #"{"type":"track","event":"e","messageId":"m","anonymousId":"a"}"#,
                    top: #""context":{"sessionId":[1]},"#), true
            ),
            // Escapes in values are fine; in member names they go the general way.
            (
                body(#"{"type":"tr\u0061ck","event":"\"quoted\" \ud83d\ude00","messageId":"m\n","anonymousId":"a"}"#),
                true
            ),
            (body(#"{"type":"track","ev\u0065nt":"e","messageId":"m","anonymousId":"a"}"#), false),
            // Numbers at the parser's edges.
            (
                body(
                    #"{"type":"track","event":"e","messageId":"m","anonymousId":"a","properties":{"n":1e999,"i":-9223372036854775808,"j":9223372036854775808}}"#
                ), true
            ),
            // A write key inside an event, a non-object event, two batches: the general way.
            (body(#"{"type":"track","event":"e","messageId":"m","anonymousId":"a","writeKey":"k"}"#), false),
            (body(#"7,{"type":"track","event":"e","messageId":"m","anonymousId":"a"}"#), false),
            (Array(#"{"batch":[],"batch":[\#(event)]}"#.utf8), false),
            // Invalid JSON: the general way words the error.
            (body(#"{"type":"track","event":"e","messageId":"m","anonymousId":"a",}"#), false),
            (
                body(#"{"type":"track","event":"e\u0000","messageId":"m","anonymousId":"a","properties":{"x":01}}"#),
                false
            ),
            (body(#"{"type":"track","event":"\#u{7}","messageId":"m","anonymousId":"a"}"#), false),
            (Array(#"{"batch":[]} x"#.utf8), false),
            (Array(#"{"batch":{}}"#.utf8), false),
            (Array(#"[]"#.utf8), false),
            // Top-level members of the wrong type: the same error either way.
            (body("", top: #""writeKey":5,"#), true),
            (Array(#"{"batch":[],"sentAt":"yesterday"}"#.utf8), true),
        ] as [([UInt8], Bool)])
    func agreesWithTheGeneralDecoder(body: [UInt8], streamed: Bool) {
        let text = String(decoding: body, as: UTF8.self)
        #expect(DecoderFuzzTests.streams(body) == streamed, "\(text)")
        #expect(
            DecoderFuzzTests.outcome(body, endpoint: .batch, streaming: true)
                == DecoderFuzzTests.outcome(body, endpoint: .batch, streaming: false), "\(text)")
    }

    @Test func nestingPastTheLimitIsRefusedAsTheParserRefusesIt() {
        let depth = JSONParser.maximumDepth
        // The message sits at depth 3, so its properties may hold depth - 4 more levels.
        for extra in [depth - 4, depth - 3] {
            let nested = String(repeating: "[", count: extra) + String(repeating: "]", count: extra)
            let bytes = Self.body(
                #"{"type":"track","event":"e","messageId":"m","anonymousId":"a","properties":{"deep":\#(nested)}}"#)
            let parses = (try? JSONParser.parse(bytes)) != nil
            #expect(parses == (extra == depth - 4))
            #expect(DecoderFuzzTests.streams(bytes) == parses)
            #expect(
                DecoderFuzzTests.outcome(bytes, endpoint: .batch, streaming: true)
                    == DecoderFuzzTests.outcome(bytes, endpoint: .batch, streaming: false))
        }
    }

    @Test func moreEventsThanTheLimitGoTheGeneralWay() throws {
        let decoder = BatchDecoder(limits: IngestLimits(maximumBatchEvents: 3))
        let bytes = Self.body(Array(repeating: Self.event, count: 4).joined(separator: ","))
        let reader = StreamingBatchReader(maximumElements: 3)
        #expect(bytes.withUnsafeBufferPointer { reader.read($0) } == nil)
        #expect(throws: CollectorError.self) { try decoder.decode(bytes, endpoint: .batch, receivedAt: 0) }
    }
}
