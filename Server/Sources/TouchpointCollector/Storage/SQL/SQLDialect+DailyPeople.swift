extension SQLDialect {
    /// What adds a chunk of people to a day's rows (``DailyPeopleRollup``), five values bound:
    /// source, event, day, chunk, bits. SQLite's one writer ORs them into the day's one row in
    /// place; PostgreSQL's parallel writes each add a row of their own (which reads OR together,
    /// and ``SQLCollectorStorage/foldDailyPeople(_:)`` merges), so none waits for another's commit.
    var dailyPeopleAdd: String {
        let insert = "INSERT INTO daily_people (source, event, day, chunk, bits) VALUES "
        switch self {
        case .sqlite:
            return insert + """
                (?, ?, ?, ?, ?) ON CONFLICT (source, event, day, chunk) \
                DO UPDATE SET bits = touchpoint_bits_or(daily_people.bits, excluded.bits)
                """
        case .postgres:
            return insert + "($1, $2, $3, $4, $5)"
        }
    }

    /// What makes a transaction overwrite what it deletes rather than leave it in free space:
    /// SQLite's `secure_delete`, set on the writer's connection for one transaction (`true` at its
    /// start, `false` at its end); PostgreSQL's free space is the server's, outside the collector.
    func secureDelete(_ on: Bool) -> [String] {
        self == .sqlite ? ["PRAGMA secure_delete = \(on ? "ON" : "OFF")"] : []
    }
}
