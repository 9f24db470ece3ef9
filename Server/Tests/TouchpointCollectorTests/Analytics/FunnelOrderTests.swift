import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// The funnel's ordering of its rows by person and time, and its median, against plain sorts.
struct FunnelOrderTests {
    /// Rows of `people` people, in random order: person numbers as the SQL stores give them (small
    /// and positive) or as ClickHouse's hashes (any 64 bits), timestamps with ties, orders of
    /// arrival with ties (ClickHouse's are all 0).
    static func rows(count: Int, people: [Int64], using random: inout SeededRandomNumberGenerator) -> [FunnelRow] {
        (0..<count).map { _ in
            FunnelRow(
                person: people.randomElement(using: &random)!, timestamp: Int64.random(in: 0..<50, using: &random),
                steps: Int.random(in: 1..<8, using: &random), value: nil,
                sequence: Int64.random(in: 0..<4, using: &random))
        }
    }

    /// Checks that `order` holds each row once, each person's rows together, in time order with
    /// ties by order of arrival, then in the rows' order.
    static func expectOrdered(_ order: [FunnelResult.OrderedRow], of rows: [FunnelRow]) {
        #expect(order.map(\.offset).sorted() == rows.indices.map(UInt32.init))
        for entry in order {
            let row = rows[Int(entry.offset)]
            #expect(
                entry.person == row.person && entry.timestamp == row.timestamp && entry.sequence == row.sequence
                    && Int(entry.steps) == row.steps)
        }
        var seen = Set<Int64>()
        for (index, entry) in order.enumerated() {
            if index > 0, order[index - 1].person == entry.person {
                let previous = order[index - 1]
                #expect(
                    (previous.timestamp, previous.sequence, previous.offset)
                        < (entry.timestamp, entry.sequence, entry.offset))
            } else {
                #expect(seen.insert(entry.person).inserted, "person \(entry.person)'s rows are in two places")
            }
        }
    }

    @Test(arguments: [0, 1, 2, 7, 100, 5_000])
    func eachPersonsRowsComeTogetherInTimeOrderTiesByArrival(count: Int) {
        var random = SeededRandomNumberGenerator(seed: UInt64(count))
        let keys = (0..<Int64(300)).map { $0 + 1 }
        let hashes = (0..<300).map { _ in Int64(bitPattern: random.next()) }
        for people in [keys, hashes, [7], [Int64.min, -1, 0, Int64.max]] {
            let rows = Self.rows(count: count, people: people, using: &random)
            Self.expectOrdered(FunnelResult.personOrder(rows), of: rows)
        }
    }

    @Test func aPersonWithManyRowsAmongFewIsOrderedToo() {
        var random = SeededRandomNumberGenerator(seed: 9)
        // One person holds most rows, so their bucket is sorted as a whole, not a few rows.
        var rows = Self.rows(count: 3_000, people: [42], using: &random)
        rows += Self.rows(count: 500, people: (1..<200).map { Int64($0) * 1_000_003 }, using: &random)
        rows.shuffle(using: &random)
        Self.expectOrdered(FunnelResult.personOrder(rows), of: rows)
    }

    @Test func aFunnelIsTheSameWhateverOrderItsRowsComeIn() {
        var random = SeededRandomNumberGenerator(seed: 3)
        // Distinct times, so the rows' order (arrival, for ties) cannot matter.
        let times = (0..<Int64(4_000)).shuffled(using: &random)
        let rows = times.map { time in
            FunnelRow(
                person: Int64.random(in: 1...400, using: &random), timestamp: time * 1_000,
                steps: 1 << Int.random(in: 0..<3, using: &random), value: Bool.random(using: &random) ? "a" : "b")
        }
        var query = FunnelQuery(
            steps: ["a", "b", "c"].map { FunnelStep(event: $0) }, window: 600_000,
            range: AnalyticsRange(from: 0, to: 4_000_000))
        query.breakdown = "plan"
        let result = FunnelResult.compute(query, rows: rows)
        #expect(result.steps[0].users > 0 && result.steps[2].users > 0)
        #expect(result == FunnelResult.compute(query, rows: rows.shuffled(using: &random)))
        #expect(result == FunnelResult.compute(query, rows: rows.sorted { $0.timestamp > $1.timestamp }))
    }

    @Test func theMedianIsTheSortedValuesMiddle() {
        var random = SeededRandomNumberGenerator(seed: 5)
        func sortedMedian(_ values: [Int64]) -> Double {
            let sorted = values.sorted()
            let middle = sorted.count / 2
            return sorted.count % 2 == 1
                ? Double(sorted[middle]) : (Double(sorted[middle - 1]) + Double(sorted[middle])) / 2
        }
        #expect(FunnelResult.median([]) == nil)
        var cases: [[Int64]] = [[5], [3, 1], [2, 2, 2, 2], Array(0..<101), Array((0..<100).reversed())]
        for count in 1...300 {
            let spread = Int64.random(in: 1...1_000, using: &random)
            cases.append((0..<count).map { _ in Int64.random(in: -spread...spread, using: &random) })
        }
        for values in cases { #expect(FunnelResult.median(values) == sortedMedian(values), "\(values)") }
    }
}
