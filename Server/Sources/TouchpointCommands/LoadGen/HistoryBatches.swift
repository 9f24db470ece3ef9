import Foundation
import TouchpointCore

/// Batches of past traffic for analytics benchmarks: `users` people over `days` days before now,
/// sent day by day in time order as a collector receives them (so a store filled with it is laid
/// out as a real one is). Users join over the whole period, one a little after another, each with
/// a `signup` on their first visit; on any day half the visits come from users who joined in the
/// last week and half from anyone who has joined, so returns fade with age. Each visit is a
/// session: `app_opened`, screens, and a share going `product_viewed` → `cart_added` →
/// `checkout_completed`. One user in ten signs in (an `identify` carrying both ids on their first
/// visit, their user id on every later event). Random (v4) message ids, as Segment's libraries
/// send.
///
/// Each client generates its own users (`user-<client>-<n>`), so clients never share a person.
struct HistoryBatches {
    private var random: SeededRandomNumberGenerator
    /// Draws the message and session ids: seeded anew for every run (see ``SyntheticBatches``).
    private var idRandom = SeededRandomNumberGenerator(seed: .random(in: 0...UInt64.max))
    private let client: Int
    private let users: Int
    private let days: Int
    private let now: Date
    /// Events per day, so the client's share of the events covers the days.
    private let perDay: Int
    private var day = 0
    private var sentToday = 0
    private var signedUp = Set<Int>()
    private var writer = JSONWriter(capacity: 128 * 1024)
    /// The events of the visit being sent, oldest first.
    private var pending: [(time: Date, user: Int, session: String, kind: Kind)] = []

    enum Kind {
        case signup, identify, opened, screen(Int), product, cart, checkout
    }

    /// - Parameter events: how many events this client will send in all (spread over the days).
    init(seed: UInt64, client: Int, users: Int, days: Int, events: Int, now: Date = Date()) {
        random = SeededRandomNumberGenerator(seed: seed &* 31 &+ UInt64(client))
        self.client = client
        self.users = max(1, users)
        self.days = max(1, days)
        self.now = now
        perDay = max(1, events / max(1, days))
    }

    /// A `/v1/batch` body with `count` events, stamped `sentAt` now (so the collector keeps their
    /// past times).
    mutating func batch(count: Int) -> [UInt8] {
        writer.reset()
        writer.beginObject()
        writer.key("batch")
        writer.beginArray()
        for _ in 0..<count {
            if pending.isEmpty { planVisit() }
            write(pending.removeFirst())
        }
        writer.endArray()
        writer.key("sentAt")
        writer.timestamp(now)
        writer.endObject()
        return writer.bytes
    }

    private mutating func uniform(_ bound: Int) -> Int { Int(random.next() % UInt64(max(1, bound))) }
    private mutating func chance(_ percent: Int) -> Bool { uniform(100) < percent }

    /// The day user `user` joins (users join one after another over the period).
    private func firstDay(of user: Int) -> Int { user * days / users }

    /// One session of one user who has joined by the current day.
    private mutating func planVisit() {
        if sentToday >= perDay, day < days - 1 {
            day += 1
            sentToday = 0
        }
        // Users who have joined by the end of today: 0 ..< joined.
        let joined = max(1, min(users, (day + 1) * users / days))
        let recent = max(0, min(joined - 1, day >= 7 ? (day - 6) * users / days : 0))
        var user = chance(50) ? recent + uniform(joined - recent) : uniform(joined)
        // A user who has not signed up yet does so now, on their first day at the earliest.
        if !signedUp.contains(user), firstDay(of: user) > day { user = joined - 1 }
        // Through the day in order; the last visits may run a little past midnight.
        let dayStart = now.addingTimeInterval(-Double(days - day) * 86_400)
        var time = dayStart.addingTimeInterval(Double(sentToday) / Double(perDay) * 86_400 + Double(uniform(60)))
        let session = idRandom.uuid4().uuidString
        var planned = 0
        func add(_ kind: Kind, after seconds: Int) {
            time = time.addingTimeInterval(Double(seconds))
            if time < now {
                pending.append((time, user, session, kind))
                planned += 1
            }
        }
        if signedUp.insert(user).inserted {
            add(.signup, after: 0)
            if user % 10 == 0 { add(.identify, after: 5) }
        }
        add(.opened, after: 1)
        for _ in 0..<(2 + uniform(6)) { add(.screen(uniform(6)), after: 5 + uniform(60)) }
        if chance(40) {
            add(.product, after: 10 + uniform(120))
            if chance(35) {
                add(.cart, after: 30 + uniform(600))
                if chance(50) { add(.checkout, after: 60 + uniform(1200)) }
            }
        }
        if planned == 0 { pending.append((now.addingTimeInterval(-1), user, session, .opened)) }
        sentToday += max(1, planned)
    }

    private static let screens = ["Home", "Search", "Product", "Cart", "Settings", "Profile"]
    private static let plans = ["free", "free", "free", "pro", "pro", "team"]

    private mutating func write(_ event: (time: Date, user: Int, session: String, kind: Kind)) {
        // One user in ten signs in: from their identify on (which carries both ids), their events
        // carry the user id; their signup, before it, is anonymous.
        let userId = "user-\(client)-\(event.user)"
        let signedIn = event.user % 10 == 0
        let plan = Self.plans[event.user % Self.plans.count]
        writer.beginObject()
        writer.key("messageId")
        writer.uuid(idRandom.uuid4())
        writer.key("timestamp")
        writer.timestamp(event.time)
        writer.key("anonymousId")
        writer.string("anon-\(client)-\(event.user)")
        var isSignup = false
        if case .signup = event.kind { isSignup = true }
        if signedIn && !isSignup {
            writer.key("userId")
            writer.string(userId)
        }
        writer.key("type")
        if case .identify = event.kind {
            writer.string("identify")
            writer.key("traits")
            writer.beginObject()
            writer.key("plan")
            writer.string(plan)
            writer.key("email")
            writer.string("person\(event.user)@example.com")
            writer.endObject()
        } else {
            writer.string("track")
            writer.key("event")
            writer.string(Self.name(event.kind))
            writer.key("properties")
            writer.beginObject()
            writer.key("plan")
            writer.string(plan)
            switch event.kind {
            case .screen(let index):
                writer.key("screen")
                writer.string(Self.screens[index])
            case .product, .cart:
                writer.key("productId")
                writer.string("p-\(event.user % 500)")
                writer.key("price")
                writer.value(.double(Double(500 + event.user % 9500) / 100))
            case .checkout:
                writer.key("amount")
                writer.value(.double(Double(500 + event.user % 19500) / 100))
                writer.key("currency")
                writer.string("EUR")
            default:
                break
            }
            writer.endObject()
        }
        writer.key("context")
        writer.beginObject()
        writer.key("sessionId")
        writer.string(event.session)
        writer.key("library")
        writer.raw(Self.library)
        writer.endObject()
        writer.endObject()
    }

    static func name(_ kind: Kind) -> String {
        switch kind {
        case .signup: "signup"
        case .identify: "identify"
        case .opened: "app_opened"
        case .screen: "screen_viewed"
        case .product: "product_viewed"
        case .cart: "cart_added"
        case .checkout: "checkout_completed"
        }
    }

    private static let library = JSONValue.object(["name": "analytics.js", "version": "5.2.0"]).jsonBytes()
}
