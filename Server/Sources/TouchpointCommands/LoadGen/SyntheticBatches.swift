import Foundation
import TouchpointCore

/// Live web traffic for load generation, as a collector behind a website receives it: many
/// visitors at once, each visit a session of its own (a handful to a few dozen page views and
/// clicks, the odd product → cart → checkout, a sign-in now and then), the events of the visits
/// in progress interleaved in every batch, with the context and property sizes a web SDK sends
/// (about 560 bytes of JSON an event). Message ids are random (v4) UUIDs, as Segment's libraries
/// send them, unless time-ordered (v7) ones are asked for, as the Touchpoint SDK sends them.
struct SyntheticBatches {
    private var random: SeededRandomNumberGenerator
    /// Draws the message and session ids: seeded anew for every run, so a second run with the same
    /// seed sends the same mix of events but new messages.
    private var idRandom = SeededRandomNumberGenerator(seed: .random(in: 0...UInt64.max))
    private let seed: UInt64
    private var writer = JSONWriter(capacity: 256 * 1024)
    private var ids: UUIDv7Generator
    private let randomIds: Bool
    /// The visits in progress.
    private var visits: [Visit] = []

    /// One visitor's session: who, and how many events it still has to send.
    private struct Visit {
        var anonymousId: String
        var userId: String?
        var sessionId: String
        var remaining: Int
        var page: Int
        /// The visitor's browser: which of ``browserContexts`` their events carry.
        var browser: Int
    }

    /// Visits in progress at once, per client.
    static let concurrentVisits = 40
    /// Visitors per client (8 clients sending 200,000 events: about 3 visits of 17 events each
    /// per visitor).
    static let visitors = 500

    /// - Parameter randomIds: random (v4) message ids, as Segment's libraries send; false for
    ///   time-ordered (v7) ids, as the Touchpoint SDK sends.
    init(seed: UInt64, randomIds: Bool = true) {
        random = SeededRandomNumberGenerator(seed: seed)
        self.seed = seed
        ids = UUIDv7Generator(seed: seed)
        self.randomIds = randomIds
    }

    /// A `/v1/batch` body with `count` events.
    /// - Returns: the body.
    mutating func batch(count: Int, at date: Date) -> [UInt8] {
        writer.reset()
        writer.beginObject()
        writer.key("batch")
        writer.beginArray()
        for _ in 0..<count { event(at: date) }
        writer.endArray()
        writer.key("sentAt")
        writer.timestamp(date)
        writer.endObject()
        return writer.bytes
    }

    private mutating func uniform(_ bound: Int) -> Int { Int(random.next() % UInt64(max(1, bound))) }

    private mutating func startVisit() -> Visit {
        // Any of the client's visitors, so most come back for several visits, keeping their ids;
        // one in four is signed in.
        let visitor = uniform(Self.visitors)
        let anonymousId = "anon-\(seed)-\(visitor)"
        return Visit(
            anonymousId: anonymousId, userId: visitor % 4 == 0 ? "user-\(seed)-\(visitor)" : nil,
            sessionId: idRandom.uuid4().uuidString, remaining: 3 + uniform(30), page: uniform(Self.pages.count),
            browser: (visitor * 37 + Int(seed % 1024)) % Self.browserContexts.count)
    }

    private mutating func event(at date: Date) {
        while visits.count < Self.concurrentVisits { visits.append(startVisit()) }
        let slot = uniform(visits.count)
        var visit = visits[slot]
        visit.remaining -= 1
        let kind = uniform(100)
        writer.beginObject()
        writer.key("messageId")
        writer.uuid(randomIds ? idRandom.uuid4() : ids.next(at: date))
        writer.key("timestamp")
        writer.timestamp(date.addingTimeInterval(-Double(uniform(5000)) / 1000))
        writer.key("anonymousId")
        writer.string(visit.anonymousId)
        if let userId = visit.userId {
            writer.key("userId")
            writer.string(userId)
        }
        writer.key("type")
        if kind < 2, let userId = visit.userId {
            writer.string("identify")
            writer.key("traits")
            writer.beginObject()
            writer.key("email")
            writer.string("\(userId)@example.com")
            writer.key("plan")
            writer.string(Self.plans[uniform(Self.plans.count)])
            writer.endObject()
        } else if kind < 45 {
            visit.page = uniform(Self.pages.count)
            writer.string("page")
            writer.key("name")
            writer.string(Self.pages[visit.page].title)
            writer.key("properties")
            writer.beginObject()
            writer.key("path")
            writer.string(Self.pages[visit.page].path)
            writer.key("title")
            writer.string(Self.pages[visit.page].title)
            writer.endObject()
        } else {
            writer.string("track")
            writer.key("event")
            trackProperties(kind)
        }
        writer.key("context")
        writer.beginObject()
        writer.key("sessionId")
        writer.string(visit.sessionId)
        writer.key("page")
        writer.beginObject()
        writer.key("path")
        writer.string(Self.pages[visit.page].path)
        writer.key("url")
        writer.string("https://shop.example.com" + Self.pages[visit.page].path)
        writer.endObject()
        for (key, value) in Self.browserContexts[visit.browser] {
            writer.key(key)
            writer.raw(value)
        }
        writer.endObject()
        writer.endObject()
        if visit.remaining <= 0 {
            visits[slot] = startVisit()
        } else {
            visits[slot] = visit
        }
    }

    /// A track call's name and properties (the name as the `event` member's value, then the
    /// properties' object).
    private mutating func trackProperties(_ kind: Int) {
        let product = "p-\(uniform(500))"
        let price = Double(500 + uniform(9500)) / 100
        switch kind {
        case 45..<75:
            writer.string("button_clicked")
            writer.key("properties")
            writer.beginObject()
            writer.key("button")
            writer.string("cta-\(uniform(12))")
            writer.key("location")
            writer.string(["header", "hero", "footer", "sidebar"][uniform(4)])
            writer.endObject()
        case 75..<90:
            writer.string("product_viewed")
            writer.key("properties")
            productProperties(product, price)
        case 90..<96:
            writer.string("cart_added")
            writer.key("properties")
            productProperties(product, price)
        default:
            writer.string("checkout_completed")
            writer.key("properties")
            writer.beginObject()
            writer.key("order_id")
            writer.string("o-\(random.next() % 1_000_000_000)")
            writer.key("revenue")
            writer.double(price * Double(1 + uniform(3)))
            writer.key("currency")
            writer.string("EUR")
            writer.endObject()
        }
    }

    private mutating func productProperties(_ product: String, _ price: Double) {
        writer.beginObject()
        writer.key("product_id")
        writer.string(product)
        writer.key("category")
        writer.string(["shoes", "bags", "hats", "shirts"][uniform(4)])
        writer.key("price")
        writer.double(price)
        writer.key("currency")
        writer.string("EUR")
        writer.endObject()
    }

    private static let pages: [(path: String, title: String)] = [
        ("/", "Home"), ("/search", "Search"), ("/products/shoes", "Shoes"), ("/products/bags", "Bags"),
        ("/cart", "Cart"), ("/checkout", "Checkout"), ("/account", "Account"), ("/blog/spring-sale", "Spring sale"),
    ]

    private static let plans = ["free", "pro", "team"]

    /// The context members that are the same for every event of a visitor (one browser): a
    /// library, a locale and one of 32 user agents (8 browsers, 4 versions each), 128 in all. Each
    /// value is written once (the load generator's own CPU counts against the collector's on a
    /// shared machine).
    private static let browserContexts: [[(String, [UInt8])]] = {
        let agents = [
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/13{v}.0.0.0 Safari/537.36",
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/13{v}.0.0.0 Safari/537.36",
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.{v} Safari/605.1.15",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_{v} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.{v} Mobile/15E148 Safari/604.1",
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:13{v}.0) Gecko/20100101 Firefox/13{v}.0",
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/13{v}.0.0.0 Safari/537.36 Edg/13{v}.0.0.0",
            "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/13{v}.0.0.0 Mobile Safari/537.36",
            "Mozilla/5.0 (X11; Linux x86_64; rv:13{v}.0) Gecko/20100101 Firefox/13{v}.0",
        ]
        let locales = ["en-US", "de-DE", "fr-FR", "en-GB"]
        var contexts: [[(String, [UInt8])]] = []
        for agent in agents {
            for version in 0..<4 {
                for locale in locales {
                    let members: [(String, JSONValue)] = [
                        ("library", ["name": "analytics.js", "version": "next-1.72.0"]), ("locale", .string(locale)),
                        ("userAgent", .string(agent.replacingOccurrences(of: "{v}", with: "\(version)"))),
                    ]
                    contexts.append(members.map { ($0.0, $0.1.jsonBytes(sortedKeys: true)) })
                }
            }
        }
        return contexts
    }()
}

extension SeededRandomNumberGenerator {
    /// A random (v4) UUID drawn from this generator: reproducible, and cheaper than the system's.
    mutating func uuid4() -> UUID {
        var bytes = (next(), next())
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = raw[6] & 0x0f | 0x40
            raw[8] = raw[8] & 0x3f | 0x80
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }
}
