// A Segment-style collector in its own process for the delivery benchmark, so the benchmark's
// memory and CPU numbers are the SDK's alone. Prints `port <n>` when listening; exits when its
// standard input closes.
//
//   BenchmarkCollector                      TestCollector: gzip, parse, validate, deduplicate
//   BenchmarkCollector --acknowledge-only   reads each body and answers 200 without looking at it
import Foundation
import TouchpointTesting

let acknowledgeOnly = CommandLine.arguments.contains("--acknowledge-only")
let collector = TestCollector(maximumBodyBytes: 1 << 20, keepsMessages: false)
let options = TestHTTPServer.Options(ioTimeout: 30, maximumBodyBytes: 1 << 20)
let server = try TestHTTPServer(options: options) { request in
    acknowledgeOnly ? .json(["success": true]) : await collector.handle(request)
}
FileHandle.standardOutput.write(Data("port \(server.port)\n".utf8))
while readLine() != nil {}
server.stop()
