import Foundation
import TouchpointCore

/// Realistic Segment batches for load generation: screens, taps, survey and promo events and the
/// occasional identify, with the context the Touchpoint SDK sends.
struct SyntheticBatches {
    private var generator: SeededRandomNumberGenerator
    private let anonymousId: String
    private let userId: String?
    private var sessionId: String
    private var eventsInSession = 0
    private var writer = JSONWriter(capacity: 128 * 1024)
    private var ids: UUIDv7Generator
    private let randomIds: Bool

    /// - Parameter randomIds: random (v4) message ids, as Segment's own libraries send, instead of
    ///   the time-ordered (v7) ids the Touchpoint SDK sends.
    init(seed: UInt64, randomIds: Bool = false) {
        generator = SeededRandomNumberGenerator(seed: seed)
        ids = UUIDv7Generator(seed: seed)
        self.randomIds = randomIds
        anonymousId = UUID().uuidString
        userId = seed % 3 == 0 ? nil : "user-\(seed)"
        sessionId = UUID().uuidString
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

    private mutating func event(at date: Date) {
        eventsInSession += 1
        if eventsInSession > 200 {
            sessionId = UUID().uuidString
            eventsInSession = 1
        }
        let kind = generator.next() % 100
        writer.beginObject()
        writer.key("messageId")
        writer.uuid(randomIds ? UUID() : ids.next(at: date))
        writer.key("timestamp")
        writer.timestamp(date.addingTimeInterval(-Double(generator.next() % 5000) / 1000))
        writer.key("anonymousId")
        writer.string(anonymousId)
        if let userId {
            writer.key("userId")
            writer.string(userId)
        }
        if kind < 3 {
            writer.key("type")
            writer.string("identify")
            writer.key("traits")
            writer.raw(Self.traits[kind == 0 ? 0 : 1])
        } else {
            writer.key("type")
            writer.string("track")
            let (name, properties) = Self.track(kind, &generator)
            writer.key("event")
            writer.string(name)
            writer.key("properties")
            writer.beginObject()
            for (key, value) in properties {
                writer.key(key)
                writer.value(value)
            }
            writer.endObject()
        }
        writer.key("context")
        writer.beginObject()
        writer.key("sessionId")
        writer.string(sessionId)
        for (key, value) in Self.constantContext {
            writer.key(key)
            writer.raw(value)
        }
        writer.endObject()
        writer.endObject()
    }

    /// The identify traits, written once (the load generator's own CPU counts against the
    /// collector's on a shared machine, so constant parts are not rebuilt for every event).
    private static let traits: [[UInt8]] = ["pro", "free"].map { plan in
        JSONValue.object(["plan": .string(plan), "signupYear": .int(2026)]).jsonBytes()
    }

    /// The context members that are the same for every event, each value written once.
    private static let constantContext: [(String, [UInt8])] =
        ([
            ("library", ["name": "touchpoint-swift", "version": "0.1.0"]),
            ("app", ["name": "Loadgen", "version": "1.4.2", "build": "142"]),
            ("device", ["model": "iPhone16,2", "manufacturer": "Apple"]),
            ("os", ["name": "iOS", "version": "18.2"]),
            ("locale", "en-US"),
            ("timezone", "Europe/Berlin"),
        ] as [(String, JSONValue)]).map { ($0.0, $0.1.jsonBytes()) }

    private static func track(_ kind: UInt64, _ generator: inout SeededRandomNumberGenerator) -> (
        String, KeyValuePairs<String, JSONValue>
    ) {
        let screens = ["Home", "Search", "Product", "Cart", "Settings", "Profile"]
        switch kind {
        case 3..<40:
            return ("screen_viewed", ["screen": .string(screens[Int(generator.next() % 6)])])
        case 40..<70:
            return (
                "button_tap",
                [
                    "button": .string("cta-\(generator.next() % 12)"),
                    "screen": .string(screens[Int(generator.next() % 6)]),
                ]
            )
        case 70..<78:
            return ("survey_presented", ["id": "ask_rating", "responseType": "choice"])
        case 78..<84:
            return (
                "survey_response",
                ["id": "ask_rating", "type": "choice", "option": .string("\(1 + generator.next() % 5)")]
            )
        case 84..<87:
            return ("survey_dismissed", ["id": "ask_rating", "responseType": "choice"])
        case 87..<95:
            return ("promo_impression", ["appID": .string("app-\(generator.next() % 4)"), "currentAppID": "loadgen"])
        case 95..<97:
            return ("promo_tap", ["appID": .string("app-\(generator.next() % 4)"), "currentAppID": "loadgen"])
        default:
            return (
                "purchase_completed",
                [
                    "amount": .double(Double(generator.next() % 10_000) / 100), "currency": "EUR",
                    "items": .int(Int(1 + generator.next() % 4)),
                ]
            )
        }
    }
}
