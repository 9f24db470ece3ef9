// A Segment-style collector in its own process for the delivery benchmark, so the benchmark's
// memory and CPU numbers are the SDK's alone. Prints `port <n>` when listening; exits when its
// standard input closes.
import Foundation
import TouchpointTesting

let collector = TestCollector(maximumBodyBytes: 1 << 20, keepsMessages: false)
let server = try TestHTTPServer(options: .init(ioTimeout: 30, maximumBodyBytes: 1 << 20), handler: collector.handle)
print("port \(server.port)")
fflush(stdout)
while let line = readLine() {
    if line == "stats" {
        let counters = collector.counters
        print("stored \(collector.storedCount) received \(counters.receivedMessages) requests \(counters.requests)")
        fflush(stdout)
    }
}
server.stop()
