// In-test fakes of the third-party SDKs the README's adapters call, with the same shape as the
// real ones. Each test makes its own, so tests run in parallel. They keep what they were given
// as JSON values, so tests can compare it.
import Foundation
import Touchpoint

/// Stands in for `Mixpanel`: `sharedInstance(withToken:)`, `sharedInstance()`, `track`,
/// `people.set`.
final class MixpanelSDK: Sendable {
    struct Tracked: Equatable, Sendable {
        let event: String
        let properties: [String: EventValue]
    }

    final class People: Sendable {
        private let values = Locked<[(property: String, value: EventValue?)]>([])

        func set(_ property: String, to value: Any?) {
            let converted = value.flatMap { MetadataConversion.value(of: $0) }
            values.withLock { $0.append((property, converted)) }
        }

        var sets: [(property: String, value: EventValue?)] { values.value }
    }

    let people = People()
    private let state = Locked<(token: String?, tracked: [Tracked])>((nil, []))

    func sharedInstance(withToken token: String) -> MixpanelSDK {
        state.withLock { $0.token = token }
        return self
    }

    /// Nil until `sharedInstance(withToken:)` was called, like the real SDK.
    func sharedInstance() -> MixpanelSDK? {
        state.withLock { $0.token } == nil ? nil : self
    }

    func track(_ event: String, properties: [String: Any]?) {
        let tracked = Tracked(event: event, properties: MetadataConversion(properties ?? [:]).properties)
        state.withLock { $0.tracked.append(tracked) }
    }

    var token: String? { state.withLock { $0.token } }
    var tracked: [Tracked] { state.withLock { $0.tracked } }
    var trackedNames: [String] { tracked.map(\.event) }
}

/// Stands in for Intercom's `ICMUserAttributes`: a plain mutable class.
final class ICMUserAttributes {
    var email: String?
    var customAttributes: [String: Any]?
}

/// Stands in for `Intercom`: `updateUser`, `setDeviceToken`, `logEvent`.
final class IntercomSDK: Sendable {
    enum Call: Equatable, Sendable {
        case updateUser(email: String?, customAttributes: [String: EventValue]?)
        case setDeviceToken(Data)
        case logEvent(String, [String: EventValue])
    }

    private let state = Locked<[Call]>([])

    func updateUser(_ attributes: ICMUserAttributes) {
        let call = Call.updateUser(
            email: attributes.email,
            customAttributes: attributes.customAttributes.map { MetadataConversion($0).properties })
        state.withLock { $0.append(call) }
    }

    func setDeviceToken(_ token: Data) {
        state.withLock { $0.append(.setDeviceToken(token)) }
    }

    func logEvent(withName name: String, metaData: [String: Any]) {
        let call = Call.logEvent(name, MetadataConversion(metaData).properties)
        state.withLock { $0.append(call) }
    }

    var calls: [Call] { state.value }
}

/// Stands in for a logging library such as SwiftyBeaver.
final class SwiftyBeaverLog: Sendable {
    private let lines = Locked<[String]>([])

    func info(_ message: String) {
        lines.withLock { $0.append(message) }
    }

    var messages: [String] { lines.value }
}
