import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// Property filters as they are written and as they match a value; the SQL that does the same in
/// each database is checked against this by the brute-force tests.
struct PropertyFilterTests {
    @Test(arguments: [
        ("plan=pro", "plan", PropertyFilter.Operator.equals, "pro"),
        ("plan=", "plan", .equals, ""),
        ("plan!=pro", "plan", .notEquals, "pro"),
        ("plan≠pro", "plan", .notEquals, "pro"),
        ("title~a=b", "title", .contains, "a=b"),
        ("amount>10.5", "amount", .greaterThan, "10.5"),
        ("amount<-3", "amount", .lessThan, "-3"),
        ("plan?", "plan", .isSet, ""),
    ])
    func filtersAreReadAsWritten(text: String, property: String, comparison: PropertyFilter.Operator, value: String)
        throws
    {
        let filter = try PropertyFilter.parse(text)
        #expect(filter == PropertyFilter(property: property, op: comparison, value: value))
        #expect(try PropertyFilter.parse(filter.description) == filter)
    }

    @Test func aPersonsTraitIsNamedWithPersonBeforeIt() throws {
        let filter = try PropertyFilter.parse("person.plan~Pro")
        #expect(filter == PropertyFilter(scope: .person, property: "plan", op: .contains, value: "Pro"))
        #expect(filter.description == "person.plan~Pro")
        #expect(filter.label == "person.plan contains Pro")
        #expect(throws: PropertyFilter.SyntaxError.self) { try PropertyFilter.parse("person.=pro") }
    }

    @Test func everyOperatorIsFoundByEachOfItsNames() {
        for op in PropertyFilter.Operator.allCases {
            for name in [op.rawValue, op.name, op.sign, op.symbol] {
                #expect(PropertyFilter.Operator(name: name) == op, "\(name)")
            }
        }
        #expect(PropertyFilter.Operator(name: "like") == nil)
    }

    @Test(arguments: ["", "plan", "=pro", "pl an=pro", "plan>lots", "plan<", "plan?x", "a.b=c", "x>inf"])
    func filtersThatCannotBeReadAreRefused(text: String) {
        #expect(throws: PropertyFilter.SyntaxError.self) { try PropertyFilter.parse(text) }
    }

    @Test func listsAreSeparatedBySemicolons() throws {
        #expect(
            try PropertyFilter.parseList("plan=pro;amount>3;;x?").map(\.description) == ["plan=pro", "amount>3", "x?"])
    }

    @Test func valuesMatchAsTheAnalyticsShowThem() throws {
        func matches(_ text: String, _ value: JSONValue?) throws -> Bool {
            try PropertyFilter.parse(text).matches(value)
        }
        #expect(try matches("plan=pro", "pro"))
        #expect(try !matches("plan=pro", "Pro"))
        #expect(try matches("flag=true", true))
        #expect(try matches("n=3", 3))
        #expect(try matches("plan!=pro", nil))
        #expect(try matches("plan!=pro", .null))
        #expect(try !matches("plan!=pro", "pro"))
        #expect(try matches("channel~GOOGLE", "Google Ads"))
        #expect(try !matches("channel~Ü", "ü"))  // only ASCII letters fold, as in SQLite
        #expect(try !matches("channel~x", nil))
        #expect(try matches("amount>10", 12.5))
        #expect(try !matches("amount>10", "12"))  // a number written as text is not a number
        #expect(try !matches("amount>10", 10))
        #expect(try matches("amount<10", -1))
        #expect(try matches("plan?", ""))
        #expect(try !matches("plan?", .null))
        #expect(try !matches("plan?", nil))
    }

    @Test func theTreeOfPathsKeepsTheMostFrequentWaysAndGathersTheRest() throws {
        let query = try AnalyticsParameters(now: TestMessages.base) { ["start": "open", "steps": "2", "top": "2"][$0] }
            .paths()
        let result = PathResult.build(
            query,
            paths: [
                PathCount(events: ["view", "buy"], people: 4), PathCount(events: ["view"], people: 2),
                PathCount(events: ["search", "view"], people: 3), PathCount(events: ["cart"], people: 1),
                PathCount(events: ["help"], people: 1), PathCount(events: [], people: 5),
            ])
        #expect(result.root.people == 16)
        #expect(result.root.ended == 5)
        #expect(result.root.children.map(\.event) == ["view", "search", nil])
        #expect(result.root.children.map(\.people) == [6, 3, 2])
        #expect(result.root.children[2].isOther)
        #expect(result.root.children[0].ended == 2)
        #expect(result.root.children[0].children.map(\.event) == ["buy"])
    }

    @Test func conversionTimesFallIntoBucketsUpToTheWindow() {
        let times = FunnelResult.ConversionTimes(
            durations: [0, 9_999, 10_000, 59_000, 7_200_000, 7_200_000], window: 7_200_000)
        #expect(times.buckets.map(\.fromSeconds) == [0, 10, 30, 60, 300, 900, 1800, 3600])
        #expect(times.buckets.last?.toSeconds == 7200)
        #expect(times.buckets.map(\.users) == [2, 1, 1, 0, 0, 0, 0, 2])
        #expect(times.medianSeconds == 34.5)
    }
}
