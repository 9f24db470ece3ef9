import Foundation
import Testing
import TouchpointCore
import TouchpointEvents

@testable import TouchpointDelivery

/// Every message type as Segment's analytics-swift puts it on the wire, written down as data from
/// reading its source (`Types.swift`: `TrackEvent`, `IdentifyEvent`, `ScreenEvent`, `GroupEvent`,
/// `AliasEvent`; `applyRawEventData` sets `anonymousId` always and `userId` once known; `alias`
/// sends the new id as `userId` and the old one as `previousId`; the values here are made up). The
/// messages Touchpoint sends for the same calls have the same members with the same values, so
/// the collector (and any Segment destination) reads them the same way.
struct SegmentShapeTests {
    static let anonymousId = "0E5C5B0C-1111-4F7B-8F4A-2B0E6C1D2E3F"

    /// analytics-swift's messages, less what only it sends (`integrations`, `_metadata`) and what
    /// differs by nature (`messageId`, `timestamp`, `context`).
    static let analyticsSwift: [String: String] = [
        "track":
            #"{"type":"track","event":"Order Completed","properties":{"total":30},"anonymousId":"\#(anonymousId)","userId":"u-42"}"#,
        "anonymousTrack":
            #"{"type":"track","event":"Product Viewed","properties":{"sku":"A-1"},"anonymousId":"\#(anonymousId)"}"#,
        "identify": #"{"type":"identify","userId":"u-42","traits":{"plan":"pro"},"anonymousId":"\#(anonymousId)"}"#,
        "screen":
            #"{"type":"screen","name":"Cart","category":"Shop","properties":{"items":2},"anonymousId":"\#(anonymousId)","userId":"u-42"}"#,
        "group":
            #"{"type":"group","groupId":"acme","traits":{"employees":12},"anonymousId":"\#(anonymousId)","userId":"u-42"}"#,
        "alias": #"{"type":"alias","userId":"u-43","previousId":"u-42","anonymousId":"\#(anonymousId)"}"#,
        // `alias` before any `identify`: Segment's analytics-kotlin (`Analytics.alias`) sends
        // `previousId: userInfo.userId ?: userInfo.anonymousId`, and the Segment spec names "an
        // Anonymous ID … or a User ID" as the previous id; the collector merges on it.
        // analytics-swift sends `previousId: self.userId`, nil while anonymous, so it leaves
        // `previousId` out (see `anonymousAliasOfAnalyticsSwift`); Touchpoint sends the kotlin shape.
        "anonymousAlias":
            #"{"type":"alias","userId":"u-50","previousId":"\#(anonymousId)","anonymousId":"\#(anonymousId)"}"#,
    ]

    /// analytics-swift's `alias(newId:)` while anonymous (`AliasEvent(newId:previousId: self.userId)`
    /// with a nil user id; optionals are left out when encoded): no `previousId`, so nothing
    /// names the id to merge. Touchpoint does not send this shape.
    static let anonymousAliasOfAnalyticsSwift =
        #"{"type":"alias","userId":"u-50","anonymousId":"\#(anonymousId)"}"#

    /// The events Touchpoint records for the same calls (see `TouchpointSDK`'s facade).
    static func event(_ name: String) -> Event {
        let session = UUID()
        func make(_ type: EventType, _ name: String, _ userId: String?, _ properties: [String: EventValue]) -> Event {
            Event(
                type: type, name: name, sessionId: session, userId: userId, anonymousId: anonymousId,
                properties: properties)
        }
        switch name {
        case "track": return make(.track, "Order Completed", "u-42", ["total": 30])
        case "anonymousTrack": return make(.track, "Product Viewed", nil, ["sku": "A-1"])
        case "identify": return make(.identify, "identify", "u-42", ["plan": "pro"])
        case "screen": return make(.screen, "Cart", "u-42", ["category": "Shop", "items": 2])
        case "group": return make(.group, "acme", "u-42", ["employees": 12])
        case "anonymousAlias": return make(.alias, "alias", "u-50", ["previousId": .string(anonymousId)])
        default: return make(.alias, "alias", "u-43", ["previousId": "u-42"])
        }
    }

    @Test(arguments: ["track", "anonymousTrack", "identify", "screen", "group", "alias", "anonymousAlias"])
    func messagesHaveAnalyticsSwiftsShape(_ kind: String) throws {
        var writer = JSONWriter()
        SegmentMessage(library: DeliveryLibrary(name: "touchpoint-swift", version: "0.1.0"), context: nil)
            .write(Self.event(kind), to: &writer)
        var ours = try #require(try JSONParser.parse(writer.bytes).objectValue)
        let theirs = try #require(try JSONParser.parse(Array(Self.analyticsSwift[kind]!.utf8)).objectValue)
        #expect(ours["messageId"]?.stringValue?.isEmpty == false)
        #expect(ours["timestamp"].flatMap(\.stringValue).flatMap(Timestamp.parse) != nil)
        #expect(ours["context"]?["sessionId"]?.stringValue != nil)
        for key in ["messageId", "timestamp", "context"] { ours.removeValue(forKey: key) }
        #expect(ours == theirs)
    }
}

extension SegmentShapeTests {
    /// The anonymous alias names the anonymous id, which analytics-swift's leaves out: the one
    /// member where Touchpoint follows analytics-kotlin and the spec instead.
    @Test func anAnonymousAliasCarriesWhatAnalyticsSwiftLeavesOut() throws {
        var writer = JSONWriter()
        SegmentMessage(library: DeliveryLibrary(name: "touchpoint-swift", version: "0.1.0"), context: nil)
            .write(Self.event("anonymousAlias"), to: &writer)
        var ours = try #require(try JSONParser.parse(writer.bytes).objectValue)
        for key in ["messageId", "timestamp", "context"] { ours.removeValue(forKey: key) }
        let swift = try #require(try JSONParser.parse(Array(Self.anonymousAliasOfAnalyticsSwift.utf8)).objectValue)
        #expect(ours["previousId"] == .string(Self.anonymousId))
        ours.removeValue(forKey: "previousId")
        #expect(ours == swift)
    }
}
