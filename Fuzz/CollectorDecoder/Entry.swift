// libFuzzer entry for the collector's request-body readers; built by scripts/fuzz-collector.sh.
import TouchpointCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let decoder = BatchDecoder(limits: IngestLimits(maximumEventBytes: 1024, maximumBatchEvents: 64))
    for endpoint in [IngestEndpoint.batch, .single(.track), .single(.identify)] {
        guard let request = try? decoder.decode(bytes, endpoint: endpoint, receivedAt: 1_767_225_600_000) else {
            continue
        }
        // Every event is accepted or rejected, once; what is accepted can be stored and read back.
        precondition(request.messages.count + request.rejections.count == request.eventCount)
        for message in request.messages {
            precondition(!message.messageId.isEmpty)
            precondition(message.userId != nil || message.anonymousId != nil)
            precondition((try? JSONParser.parse(message.payload)) != nil)
        }
    }
    if let inflated = try? BodyInflater.inflate(bytes, limit: 64 * 1024) {
        precondition(inflated.count <= 64 * 1024)
    }
    return 0
}
