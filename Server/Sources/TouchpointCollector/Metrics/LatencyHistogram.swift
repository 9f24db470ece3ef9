/// A Prometheus-style cumulative histogram of durations in seconds.
struct LatencyHistogram: Sendable {
    /// Upper bounds of the buckets, in seconds.
    static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    private(set) var counts = [Int](repeating: 0, count: LatencyHistogram.bounds.count)
    private(set) var count = 0
    private(set) var sum = 0.0

    mutating func record(_ seconds: Double) {
        count += 1
        sum += seconds
        if let bucket = Self.bounds.firstIndex(where: { seconds <= $0 }) { counts[bucket] += 1 }
    }

    /// Appends the histogram's lines in Prometheus text format.
    func render(name: String, labels: String, into text: inout String) {
        let prefix = labels.isEmpty ? "" : labels + ","
        var cumulative = 0
        for (bound, bucketCount) in zip(Self.bounds, counts) {
            cumulative += bucketCount
            text += "\(name)_bucket{\(prefix)le=\"\(bound)\"} \(cumulative)\n"
        }
        text += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(count)\n"
        let braces = labels.isEmpty ? "" : "{\(labels)}"
        text += "\(name)_sum\(braces) \(sum)\n"
        text += "\(name)_count\(braces) \(count)\n"
    }
}
