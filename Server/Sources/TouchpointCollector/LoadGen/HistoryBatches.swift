import Foundation
import TouchpointCore

/// Batches of past traffic for analytics benchmarks: `users` people over `days` days before now,
/// each joining on a day of their own (`signup`) and coming back on later days with a chance that
/// fades, each visit a session: `app_opened`, screens, and a share going
/// `product_viewed` → `cart_added` → `checkout_completed`; about one visitor in ten signs in with
/// an `identify` that carries both ids. Random (v4) message ids, as Segment's libraries send.
///
/// Each client generates its own users (`user-<client>-<n>`), so clients never share a person.
struct HistoryBatches {
    private var random: SeededRandomNumberGenerator
    private let client: Int
    private let users: Int
    private let days: Int
    private let now: Date
    private var writer = JSONWriter(capacity: 128 * 1024)
    /// The events of the visit being sent, oldest first.
    private var pending: [(time: Date, user: Int, session: String, kind: Kind)] = []

    enum Kind {
        case signup, identify, opened, screen(Int), product, cart, checkout
    }

    init(seed: UInt64, client: Int, users: Int, days: Int, now: Date = Date()) {
        random = SeededRandomNumberGenerator(seed: seed &* 31 &+ UInt64(client))
        self.client = client
        self.users = max(1, users)
        self.days = max(1, days)
        self.now = now
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

    private mutating func uniform(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
    private mutating func chance(_ percent: Int) -> Bool { uniform(100) < percent }

    /// One session of one user: on their first day a signup; later, returns that fade over the weeks.
    private mutating func planVisit() {
        let user = uniform(users)
        // Each user's first day is fixed by their number; a visit is on it or on a later day.
        var userRandom = SeededRandomNumberGenerator(seed: UInt64(client) &* 1_000_003 &+ UInt64(user))
        let firstDay = Int(userRandom.next() % UInt64(days))
        let remaining = days - firstDay
        // Half the visits on the first week of a user's life, the rest spread after it.
        let offset = chance(50) ? uniform(min(7, remaining)) : uniform(remaining)
        let dayStart = now.addingTimeInterval(-Double(days - firstDay - offset) * 86_400)
        var time = dayStart.addingTimeInterval(Double(uniform(86_000)))
        let session = UUID().uuidString
        func add(_ kind: Kind, after seconds: Int) {
            time = time.addingTimeInterval(Double(seconds))
            if time < now { pending.append((time, user, session, kind)) }
        }
        if offset == 0 {
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
        if pending.isEmpty { add(.opened, after: 0) }
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
        writer.uuid(UUID())
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
