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

    /// What a transaction that rewrites a day's rows takes first, three values bound (source,
    /// event, day): PostgreSQL's fold and a deletion's clearing each read and replace the rows, and
    /// one committing between the other's read and write would lose or keep the wrong bits; a
    /// transaction-level advisory lock on the day keeps them apart (writers only add rows and
    /// take none). SQLite's one writer needs none.
    var lockDailyPeopleDay: String? {
        self == .postgres ? "SELECT pg_advisory_xact_lock(hashtext($1 || '/' || $2 || '/' || $3::text))" : nil
    }

    /// An alias call's `previousId`, read from the stored payload (the deletion of a user's data
    /// finds the alias calls that named a deleted id; they are rare, so reading their payload is).
    var aliasPreviousId: String {
        switch self {
        case .sqlite: "CAST(json_extract(payload, '$.previousId') AS TEXT)"
        case .postgres:
            // A payload holding the escape \u0000 is not valid `json` for PostgreSQL: read with it replaced.
            "((CASE WHEN strpos(payload, chr(92) || 'u0000') > 0 THEN replace(payload, chr(92) || 'u0000', chr(92) || 'ufffd') ELSE payload END)::json #>> '{previousId}')"
        }
    }

    /// What makes a transaction overwrite what it deletes rather than leave it in free space:
    /// SQLite's `secure_delete`, set on the writer's connection for one transaction (`true` at its
    /// start, `false` at its end); PostgreSQL's free space is the server's, outside the collector.
    func secureDelete(_ on: Bool) -> [String] {
        self == .sqlite ? ["PRAGMA secure_delete = \(on ? "ON" : "OFF")"] : []
    }
}
