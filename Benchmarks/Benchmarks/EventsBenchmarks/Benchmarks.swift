import Benchmark
import Foundation
import Touchpoint
import TouchpointTesting

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput], maxDuration: .seconds(5))

    Benchmark("record, one thread", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let directory = try TemporaryDirectory(prefix: "bench-record")
        let recorder = EventRecorder(directory: directory.url)
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            recorder.record("button_tap", properties: ["screen": "Home", "count": .int(index)])
        }
    }
}
