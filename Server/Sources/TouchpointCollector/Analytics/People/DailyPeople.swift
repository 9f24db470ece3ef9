/// The people who did an event on each local day, merges resolved: what an insight reads from
/// the daily-people rollup (``DailyPeopleRollup``), and all it needs to answer.
struct DailyPeople: Sendable, Equatable {
    /// People per local day; days without anyone are absent.
    var days: [Int64: PersonSet]

    init(_ days: [Int64: PersonSet] = [:]) { self.days = days.filter { !$0.value.isEmpty } }

    /// The people of any day in `range`.
    func union(_ range: ClosedRange<Int64>) -> PersonSet {
        var result = PersonSet()
        // Few days are stored compared with a long range: walk whichever is smaller.
        if Int64(days.count) < range.upperBound - range.lowerBound + 1 {
            for (day, people) in days where range.contains(day) { result.formUnion(people) }
        } else {
            for day in range { if let people = days[day] { result.formUnion(people) } }
        }
        return result
    }
}

/// The anonymous ids merged into users, as numbers: how a rollup's anonymous side is read as
/// people (``PersonKeys``).
struct MergedPeople: Sendable {
    /// The merged anonymous ids' numbers.
    private(set) var merged = PersonSet()
    /// Each merged anonymous id's user.
    private(set) var users: [Int64: Int64] = [:]

    init() {}

    /// Records that anonymous id number `anonymous` is user number `user`.
    mutating func add(anonymous: Int64, user: Int64) {
        merged.insert(anonymous)
        users[anonymous] = user
    }

    /// The people of a day: those who did it with a user id (`users`), and those without one
    /// (`anonymous`), each merged anonymous id counted as its user.
    func people(users userSide: PersonSet, anonymous: PersonSet) -> PersonSet {
        var result = userSide
        result.formUnion(anonymous.subtracting(merged))
        anonymous.intersection(merged).forEach { number in
            if let user = users[number] { result.insert(user) }
        }
        return result
    }
}

extension DailyPeople {
    /// Only the people of `people` on each day (a cohort's, as ``PersonKeys`` numbers); everyone
    /// when `people` is nil.
    func restricted(to people: Set<Int64>?) -> DailyPeople {
        guard let people else { return self }
        let kept = PersonSet(people)
        return DailyPeople(days.mapValues { $0.intersection(kept) })
    }
}
