import Foundation
import Logging
import TouchpointCore
import TouchpointDelivery
import TouchpointEvents

/// The calls an app team knows from Segment's analytics-swift, on the started SDK: who the user
/// is, what they do and see, and whether they agreed to be recorded.
///
/// ```swift
/// let sdk = try TouchpointSDK.start(writeKey: "wk_…", collector: collectorURL)
/// sdk.identify(userId: "u-42", traits: ["plan": "pro"])
/// sdk.track("Order Completed", properties: ["total": 30])
/// sdk.screen("Cart", category: "Shop")
/// sdk.reset()  // signed out: a new anonymous user from here on
/// ```
///
/// Every call records into the SDK's recorder, so every module sees it in order (delivery to the
/// collector, routing to analytics tools, survey triggers); the collector receives the messages
/// analytics-swift would send (`identify` with `traits`, `group` with `groupId`, `alias` with
/// `previousId`, `userId` once known and `anonymousId` always), and merges the anonymous visitor
/// into the user on `identify` and `alias`.
extension TouchpointSDK {
    // MARK: Who

    /// The installation's anonymous id: on every message, kept across launches, new after ``reset()``.
    public var anonymousId: String { recorder.anonymousId }

    /// The user ``identify(userId:traits:)`` named (or the session's user), nil while anonymous.
    public var userId: String? { recorder.userId }

    /// The user's traits as ``identify(userId:traits:)`` set them since the user was named (a trait
    /// set to `null` is removed); empty after ``reset()``. Kept across launches.
    public var traits: [String: EventValue] {
        identity.withLock { identity in identity.userId == recorder.userId ? identity.traits : [:] }
    }

    /// Names the user and records traits about them: an `identify` message with `userId`,
    /// `anonymousId` and `traits`, on which the collector merges this installation's anonymous
    /// visits into the user. A new user starts a new session; the same user keeps theirs.
    ///
    /// - Parameters:
    ///   - userId: your id for the user; must not be empty.
    ///   - traits: what you know about them (`email`, `plan`, …); merged into ``traits``.
    /// - Returns: the recorded event, or nil when `userId` is empty (logged), the user opted out
    ///   or the recorder refused it.
    @discardableResult
    public func identify(userId: String, traits: [String: EventValue] = [:]) -> Event? {
        guard !userId.isEmpty else {
            logger.error("identify(userId:traits:) with an empty user id: nothing recorded")
            return nil
        }
        guard let event = recorder.record("identify", properties: traits, type: .identify, userID: userId) else {
            return nil
        }
        remember(userId: userId, traits: traits)
        return event
    }

    /// Records traits about the current user (or the anonymous visitor): an `identify` message
    /// without a new `userId`.
    /// - Returns: the recorded event, or nil when refused.
    @discardableResult
    public func identify(traits: [String: EventValue]) -> Event? {
        guard let event = recorder.record("identify", properties: traits, type: .identify) else { return nil }
        remember(userId: event.userId, traits: traits)
        return event
    }

    /// Records something the user did: a `track` message named `name`.
    /// - Returns: the recorded event, or nil when refused (opted out, larger than 32 KB).
    @discardableResult
    public func track(_ name: String, properties: [String: EventValue] = [:]) -> Event? {
        recorder.record(name, properties: properties)
    }

    /// Records a screen the user saw: a `screen` message named `name`, with `category` when given
    /// (SwiftUI: `.touchpointScreen(_:category:properties:)` on the view).
    /// - Returns: the recorded event, or nil when refused.
    @discardableResult
    public func screen(_ name: String, category: String? = nil, properties: [String: EventValue] = [:]) -> Event? {
        ScreenViews.record(name, category: category, properties: properties, in: recorder)
    }

    /// Records that the user belongs to a group (a company, a team): a `group` message with
    /// `groupId` and the group's `traits`.
    /// - Returns: the recorded event, or nil when `groupId` is empty (logged) or refused.
    @discardableResult
    public func group(_ groupId: String, traits: [String: EventValue] = [:]) -> Event? {
        guard !groupId.isEmpty else {
            logger.error("group(_:traits:) with an empty group id: nothing recorded")
            return nil
        }
        return recorder.record(groupId, properties: traits, type: .group)
    }

    /// Gives the user a new id: an `alias` message whose `previousId` is the current user id (or,
    /// while anonymous, the anonymous id) and whose `userId` is `newId`, which later events carry.
    /// The collector merges the two.
    /// - Returns: the recorded event, or nil when `newId` is empty (logged) or refused.
    @discardableResult
    public func alias(_ newId: String) -> Event? {
        guard !newId.isEmpty else {
            logger.error("alias(_:) with an empty id: nothing recorded")
            return nil
        }
        let previousId = recorder.userId ?? recorder.anonymousId
        guard
            let event = recorder.record(
                "alias", properties: ["previousId": .string(previousId)], type: .alias, userID: newId)
        else { return nil }
        identity.withLock { identity in
            if identity.userId == previousId { identity.userId = newId } else { identity = Identity(userId: newId) }
        }
        saveIdentity()
        return event
    }

    /// Forgets the user, as when they sign out: a new anonymous id, no user and no traits, and a
    /// new session. What was recorded before is still delivered, under the ids it was recorded
    /// with; the collector sees two people. Routing's analytics adapters forget the user too
    /// (`AnalyticsAdapter.reset()`), after the previous user's events and before the next one's.
    public func reset() {
        recorder.resetIdentity()
        identity.withLock { $0 = Identity() }
        saveIdentity()
    }

    // MARK: Sending

    /// Flushes the log to stable storage and sends what is pending now, without waiting.
    public func flush() {
        Task {
            try? await recorder.flush()
            _ = try? await dispatcher.dispatch(timeout: 60)
        }
    }

    /// Flushes the log and sends what is pending, returning once the collector acknowledged
    /// everything recorded before the call.
    /// - Parameter timeout: the most seconds to wait.
    /// - Returns: how many events were acknowledged and dropped.
    /// - Throws: ``DeliveryError`` (`timedOut`, `optedOut`, …), or the disk's error when events
    ///   wait in memory.
    @discardableResult
    public func flush(timeout: TimeInterval) async throws -> DispatchReport {
        try await recorder.flush()
        return try await dispatcher.dispatch(timeout: timeout)
    }

    // MARK: Consent

    /// Whether the user opted out: nothing is recorded, stored, routed or sent.
    public var isOptedOut: Bool { recorder.isOptedOut }

    /// Stops recording and sending until ``optIn()``, in this run and the next ones: every
    /// module's events are refused at the recorder, and delivery sends nothing.
    /// - Parameter discardingPending: whether to delete what was recorded and not yet delivered
    ///   (the anonymous id too), or keep it to be sent after ``optIn()``.
    public func optOut(discardingPending: Bool = false) async {
        await recorder.optOut(discardingPending: discardingPending)
        if discardingPending {
            identity.withLock { $0 = Identity() }
            saveIdentity()
        }
    }

    /// Records and sends again after ``optOut(discardingPending:)`` (remembered across launches).
    public func optIn() async {
        await recorder.optIn()
    }

    // MARK: Identity kept across launches

    /// The user `identify` named and their traits.
    struct Identity: Sendable {
        var userId: String?
        var traits: [String: EventValue] = [:]

        var json: JSONValue {
            var members: [String: JSONValue] = ["traits": .object(traits)]
            if let userId { members["userId"] = .string(userId) }
            return .object(members)
        }

        init(userId: String? = nil, traits: [String: EventValue] = [:]) {
            self.userId = userId
            self.traits = traits
        }

        /// `state/identity.json` of `recorder`'s directory, or an empty identity.
        static func load(for recorder: EventRecorder) -> Identity {
            guard let bytes = try? AtomicFile.read(LogLayout(base: recorder.directory).identityPath),
                case .object(let members)? = try? JSONParser.parse(bytes)
            else { return Identity() }
            return Identity(userId: members["userId"]?.stringValue, traits: members["traits"]?.objectValue ?? [:])
        }
    }

    private func remember(userId: String?, traits: [String: EventValue]) {
        identity.withLock { identity in
            if identity.userId != userId { identity = Identity(userId: userId) }
            for (key, value) in traits {
                if value == .null { identity.traits.removeValue(forKey: key) } else { identity.traits[key] = value }
            }
        }
        saveIdentity()
    }

    /// Writes the identity off the caller's thread, in call order.
    private func saveIdentity() {
        let json = identity.withLock { $0.json }
        let path = LogLayout(base: recorder.directory).identityPath
        let statePath = LogLayout(base: recorder.directory).statePath
        let logger = self.logger
        identityQueue.async {
            do {
                try AtomicFile.createDirectory(statePath)
                try AtomicFile.write(json.jsonBytes(sortedKeys: true), to: path, durable: false)
            } catch {
                logger.error("cannot keep the user's identity: \(error)")
            }
        }
    }
}
