import Testing
import TouchpointTesting

struct FaultPlanTests {
    func decisions(_ plan: FaultPlan, count: Int, bodySize: Int = 0) -> [FaultPlan.Fault?] {
        var plan = plan
        return (0..<count).map { _ in plan.nextFault(bodySize: bodySize) }
    }

    @Test func theSameSeedReplaysTheSameDecisions() {
        let plan = FaultPlan(seed: 11, rates: [.internalServerError: 0.3, .reset: 0.2])
        #expect(decisions(plan, count: 500) == decisions(plan, count: 500))
        let other = FaultPlan(seed: 12, rates: [.internalServerError: 0.3, .reset: 0.2])
        #expect(decisions(plan, count: 500) != decisions(other, count: 500))
    }

    @Test func theSequenceComesFirstThenTheRates() {
        let plan = FaultPlan(seed: 1, sequence: [.reset, nil, .tooManyRequests(retryAfter: "2")], rates: [.reset: 1])
        #expect(decisions(plan, count: 5) == [.reset, nil, .tooManyRequests(retryAfter: "2"), .reset, .reset])
    }

    @Test func ratesAreRoughlyObserved() {
        let plan = FaultPlan(
            seed: 2024,
            rates: [.internalServerError: 0.10, .serviceUnavailable(retryAfter: "1"): 0.05, .stall(seconds: 1): 0.02]
        )
        let drawn = decisions(plan, count: 20_000)
        let serverErrors = drawn.filter { $0 == .internalServerError }.count
        let unavailable = drawn.filter { $0 == .serviceUnavailable(retryAfter: "1") }.count
        let stalls = drawn.filter { $0 == .stall(seconds: 1) }.count
        #expect((1_800...2_200).contains(serverErrors))
        #expect((850...1_150).contains(unavailable))
        #expect((300...500).contains(stalls))
        #expect(drawn.filter { $0 == nil }.count == 20_000 - serverErrors - unavailable - stalls)
    }

    @Test func consecutiveFaultsAreCapped() {
        let plan = FaultPlan(seed: 3, rates: [.reset: 1], maximumConsecutiveFaults: 3)
        #expect(decisions(plan, count: 8) == [.reset, .reset, .reset, nil, .reset, .reset, .reset, nil])
    }

    @Test func bodiesOverThePayloadLimitGet413WithoutShiftingTheDraws() {
        let plan = FaultPlan(seed: 5, rates: [.reset: 0.5], payloadLimit: 100)
        var big = plan
        var small = plan
        #expect(big.nextFault(bodySize: 101) == .payloadTooLarge)
        #expect(big.nextFault(bodySize: 100) == small.nextFault(bodySize: 0))
    }

    @Test func noneForwardsEverything() {
        #expect(decisions(.none, count: 100).allSatisfy { $0 == nil })
    }
}
