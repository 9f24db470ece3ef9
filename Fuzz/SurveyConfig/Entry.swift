import Foundation
import TouchpointCore

/// libFuzzer entry: any bytes as a survey config. No crash, and the validator, strict decoding,
/// JSONDecoder and lenient loading tell the same story.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let load = SurveyConfig.load(bytes: bytes)
    let problems = SurveyConfigValidator.validate(bytes: bytes)
    precondition(problems.count >= load.problems.count)
    if load.isUsable {
        precondition(SurveyConfigValidator.validate(load.config.json).isEmpty)
        precondition(Set(load.config.surveys.map(\.id)).count == load.config.surveys.count)
    }
    if let strict = try? SurveyConfig.from(bytes: bytes) { precondition(strict == load.config && load.isValid) }
    // JSONDecoder keeps the first of repeated keys, JSONParser the last: compare validity only.
    if let decoded = try? JSONDecoder().decode(SurveyConfig.self, from: Data(bytes)) {
        precondition(SurveyConfigValidator.validate(decoded.json).isEmpty)
    }
    return 0
}
