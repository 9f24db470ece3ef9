// swift-format-ignore-file: the README samples stay as the README writes them.

// The seed README's samples, as an app writes them: bare protocol types, plain classes, no
// concurrency annotations. This file is compiled twice, in Swift 6 mode
// (TouchpointRoutingSwift6SampleTests) and, through a symbolic link, in Swift 5 mode
// (TouchpointRoutingSwift5SampleTests).
//
// Departures from the README text, each forced by the README itself:
// - `Mixpanel`, `Intercom`, `ICMUserAttributes` and `SwiftyBeaver` are in-test fakes of the same
//   shape (SampleSDKs.swift); `Mixpanel.sharedInstance()` and `Intercom.updateUser(_:)` become
//   calls on a fake SDK object handed to the adapter (`mixpanel.sharedInstance()`), not on
//   process-wide singletons, so that tests can run in parallel.
// - `let identifier: EventIdentifier(object: …)` (a syntax error in the README) is written
//   `let identifier = EventIdentifier(object: …)`.
// - The second `Email` declares `trackedValue` as `TrackableValueType?`, as the first does (a
//   non-optional property cannot satisfy the optional requirement).
// - The rule samples name types that exist (`Events.App.Opened`, `Events.User.LoggedIn`).
import Foundation
import Touchpoint

// MARK: Quick start: define your events

struct Events {
    struct App {
        static let name = "App"

        struct Opened: TrackableEvent {
            let appName: String

            let identifier = EventIdentifier(object: name, action: "Opened")

            var metadata: [String: Any] {
                return [
                    "name": appName
                ]
            }
        }
    }

    struct User {
        static let name = "User"

        struct LoggedIn: TrackableEvent {
            let identifier = EventIdentifier(object: name, action: "Logged In")
        }

        struct LoggedOut: TrackableEvent {
            let identifier = EventIdentifier(object: name, action: "Logged Out")
        }

        struct ProfileUpdated: TrackableEvent {
            let newName: String
            let identifier = EventIdentifier(object: name, action: "Profile Updated")
            var metadata: [String: Any] {
                return ["new_name": newName]
            }
        }
    }

    struct EventDetail {
        static let name = "Event Detail"

        struct Viewed: TrackableEvent {
            let eventId: Int
            let state: String

            let identifier = EventIdentifier(object: name, action: "Viewed")

            var metadata: [String: Any] {
                return ["event_id": eventId, "state": state]
            }
        }
    }
}

// MARK: Defining events

let dateFormatter: DateFormatter = {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm"
    return formatter
}()

struct AppOpen: TrackableEvent {
    let timestamp: Date

    let identifier: EventIdentifier = EventIdentifier(object: "App", action: "Open")
    var metadata: [String: Any] {
        return ["timestamp": dateFormatter.string(from: timestamp)]
    }
}

// MARK: Track property

struct Email: TrackableProperty {
    let identifier: String = "email"  // Name of the property
    let value: String  // Our value, whatever type we need. Enums are handy.

    var trackedValue: TrackableValueType? { return value }  // How to convert our value to TrackableValueType
    // String and Int are trackable by default
}

// MARK: Binding event to property

struct EmailChanged: TrackableEvent {
    let newEmail: String

    let identifier: EventIdentifier = EventIdentifier(object: "User", action: "Changed", label: "Email")
    var metadata: [String: Any] {
        return ["new_email": newEmail]
    }
}

struct BoundEmail: TrackableProperty {
    let identifier: String = "email"  // Name of the property
    let value: String  // Our value, whatever type we need. Enums are handy.

    var trackedValue: TrackableValueType? { return value }  // How to convert our value to TrackableValueType
    // String and Int are trackable by default
    func generateUpdateEvents() -> [TrackableEvent] {
        let emailChanged = EmailChanged(newEmail: value)
        return [emailChanged]
    }
}

// MARK: Enums are handy

enum Plan: String, TrackableValueType {
    case free, pro
}

struct PlanProperty: TrackableProperty {
    let identifier: String = "plan"
    let value: Plan

    var trackedValue: TrackableValueType? { return value }
}

// MARK: Plug-in analytics tool

class MixpanelAdapter: AnalyticsAdapter {

    private let token: String
    private let mixpanel: MixpanelSDK  // the in-test fake SDK

    // Optional name for nice logs. By default the class name is used (e.g. `MixpanelAdapter`)
    var name: String { "Mixpanel" }

    init(token: String, sdk: MixpanelSDK) {
        self.token = token
        self.mixpanel = sdk
    }

    // This method is when the tracking is about to start
    func configure() {
        _ = mixpanel.sharedInstance(withToken: token)
    }

    // This is called when the adapter receives an event to track
    func track(event: TrackableEvent) {
        // Track event in Mixpanel
        mixpanel.sharedInstance()?.track(event.identifier.stringValue, properties: event.metadata)
    }

    // This is called when the adapter receives a property to track
    func track(property: TrackableProperty) {
        // Track property in Mixpanel
        mixpanel.sharedInstance()?.people.set(property.identifier, to: property.trackedValue)
    }
}

// MARK: Rules

enum ProhibitSample {
    class MixpanelAdapter: AnalyticsAdapter {

        // Set event tracking rule to prohibit AppOpen event from being tracked
        // That means function track(event:) for this tracker wont be called for AppOpen event
        let eventTrackingRule: EventTrackingRule? = EventTrackingRule(.prohibit, types: [AppOpen.self])

        private let token: String
        private let mixpanel: MixpanelSDK

        init(token: String, sdk: MixpanelSDK) {
            self.token = token
            self.mixpanel = sdk
        }

        func configure() {
            _ = mixpanel.sharedInstance(withToken: token)
        }

        func track(event: TrackableEvent) {
            // Track event in Mixpanel
            mixpanel.sharedInstance()?.track(event.identifier.stringValue, properties: event.metadata)
        }

        func track(property: TrackableProperty) {
            // Track property in Mixpanel
            mixpanel.sharedInstance()?.people.set(property.identifier, to: property.trackedValue)
        }
    }
}

enum AllowSample {
    class MixpanelAdapter: AnalyticsAdapter {
        let eventTrackingRule: EventTrackingRule? = EventTrackingRule(
            .allow,
            types: [
                Events.App.Opened.self,
                Events.User.LoggedIn.self,
            ]
        )

        private let mixpanel: MixpanelSDK

        init(sdk: MixpanelSDK) {
            self.mixpanel = sdk
        }

        func configure() {
            _ = mixpanel.sharedInstance(withToken: "abcd")
        }

        func track(event: TrackableEvent) {
            mixpanel.sharedInstance()?.track(event.identifier.stringValue, properties: event.metadata)
        }

        func track(property: TrackableProperty) {
            mixpanel.sharedInstance()?.people.set(property.identifier, to: property.trackedValue)
        }
    }
}

// MARK: Exceptions

enum Property {
    struct Email: TrackableProperty {
        let identifier: String = "email"
        let value: String

        var trackedValue: TrackableValueType? { return value }
    }

    struct PushNotificationToken: TrackableProperty {
        let identifier: String = "push_token"
        let value: Data

        var trackedValue: TrackableValueType? { return value.base64EncodedString() }
    }

    struct Nickname: TrackableProperty {
        let identifier: String = "nickname"
        let value: String?

        var trackedValue: TrackableValueType? { return value }
    }
}

class IntercomAdapter: AnalyticsAdapter {
    private let intercom: IntercomSDK

    var name: String { "Intercom" }

    init(sdk: IntercomSDK) {
        self.intercom = sdk
    }

    func configure() {}

    func track(event: TrackableEvent) {
        intercom.logEvent(withName: event.identifier.stringValue, metaData: event.metadata)
    }

    func track(property: TrackableProperty) {

        switch property {
        case is Property.Email:
            let attrs = ICMUserAttributes()
            attrs.email = property.trackedValue?.stringValue
            intercom.updateUser(attrs)
        case let property as Property.PushNotificationToken:
            intercom.setDeviceToken(property.value)
        default:
            let attrs = ICMUserAttributes()
            attrs.customAttributes = [property.identifier: property.trackedValue ?? ""]
            intercom.updateUser(attrs)
        }
    }
}

// MARK: Start tracking

@MainActor
final class AppDelegate {
    private let mixpanel: MixpanelSDK

    init(mixpanel: MixpanelSDK) {
        self.mixpanel = mixpanel
    }

    func applicationDidFinishLaunching() {
        GlobalTracker.startTracking(adapters: [MixpanelAdapter(token: "abcd", sdk: mixpanel)])
    }
}
