import Foundation
import TouchpointCore
import TouchpointEvents

/// Survey gating as a plain state machine: given the rules an event matched, it decides which
/// (if any) to show, and notes it. It does no I/O and reads no clock, so it is tested directly,
/// driven by the engine, and replayed by the simulator with event timestamps.
///
/// For each candidate rule, in config order, the first reason that applies keeps it off screen:
/// 1. `oncePerUser` and it was ever shown to this user;
/// 2. `oncePerSession` and it was shown in this session;
/// 3. `cooldownSeconds` since it was last shown to this user have not passed;
/// 4. `sampleRate`: `StableHash.unitInterval("<survey id>:<user key>")` is not below the rate;
/// 5. it is already waiting for its delay;
/// 6. `globalCooldownSeconds` since any survey was shown to this user have not passed;
/// 7. a survey is on screen.
///
/// The first eligible rule wins (the later ones are `preempted`). With `delaySeconds` it is
/// scheduled, and every check runs again when the delay ends.
///
/// ```swift
/// var gate = SurveyGate(globalCooldownSeconds: config.globalCooldownSeconds)
/// let decision = gate.evaluate(matchedRules, event: event, now: event.timestamp)
/// if case .present(let rule) = decision.action { show(rule) }
/// gate.presentationEnded(surveyID: rule.id)
/// ```
public struct SurveyGate: Sendable {
    /// A survey waiting for its delay to end.
    public struct Pending: Sendable, Hashable {
        /// The survey's id.
        public var surveyID: String
        /// The event that triggered it.
        public var event: Event
        /// When the delay ends.
        public var due: Date
    }

    /// The survey on screen.
    public struct OnScreen: Sendable, Hashable {
        /// The survey's id.
        public var surveyID: String
        /// The event that triggered it.
        public var event: Event
        /// When it was presented.
        public var since: Date
    }

    /// The least time between two surveys for one user; nil for none.
    public var globalCooldownSeconds: TimeInterval?
    /// The histories known so far, by user key. Load a user's persisted history with
    /// ``setHistory(_:)`` before evaluating their events; an unknown user has an empty one.
    public private(set) var histories: [String: SurveyUserHistory] = [:]
    /// The survey on screen, if any.
    public private(set) var onScreen: OnScreen?
    /// The surveys waiting for their delay, by id.
    public private(set) var pending: [String: Pending] = [:]

    /// Creates a gate with no history.
    /// - Parameter globalCooldownSeconds: the least time between two surveys for one user.
    public init(globalCooldownSeconds: TimeInterval? = nil) {
        self.globalCooldownSeconds = globalCooldownSeconds
    }

    /// The key gating uses for a user: the user id, or `anon` for an anonymous session.
    public static func userKey(for userId: String?) -> String {
        guard let userId, !userId.isEmpty else { return "anon" }
        return userId
    }

    /// Whether the history of `userKey` has been set or built up.
    public func hasHistory(for userKey: String) -> Bool { histories[userKey] != nil }

    /// The history of `userKey` (empty when unknown).
    public func history(for userKey: String) -> SurveyUserHistory {
        histories[userKey] ?? SurveyUserHistory(userKey: userKey)
    }

    /// Installs a user's history (read from disk).
    public mutating func setHistory(_ history: SurveyUserHistory) { histories[history.userKey] = history }

    /// Why `rule` may not be shown now for the event's user and session, or nil when it may.
    /// - Parameters:
    ///   - rule: the candidate.
    ///   - event: the triggering event (its user and session count).
    ///   - now: the time of the decision.
    public func eligibility(of rule: SurveyRule, for event: Event, now: Date) -> SurveySkipReason? {
        let userKey = Self.userKey(for: event.userId)
        let history = histories[userKey]
        let entry = history?.surveys[rule.id]
        let shown = (entry?.presentations ?? 0) > 0
        if rule.oncePerUser && shown { return .shownToUser }
        if rule.oncePerSession, shown, entry?.lastSessionId == event.sessionId { return .shownThisSession }
        if let cooldown = rule.cooldownSeconds, let last = entry?.lastPresentedAt {
            let until = last.addingTimeInterval(cooldown)
            if now < until { return .cooldown(until: until) }
        }
        if let rate = rule.sampleRate, !(StableHash.unitInterval("\(rule.id):\(userKey)") < rate) {
            return .sampledOut(rate: rate)
        }
        if let waiting = pending[rule.id] { return .delayPending(until: waiting.due) }
        if let cooldown = globalCooldownSeconds, let last = history?.lastPresentedAt {
            let until = last.addingTimeInterval(cooldown)
            if now < until { return .globalCooldown(until: until) }
        }
        if let onScreen { return .surveyOnScreen(onScreen.surveyID) }
        return nil
    }

    /// Decides for an event whose trigger matched `candidates` (in config order): the first
    /// eligible one is presented (and noted) or scheduled; the others are skipped with a reason.
    /// - Parameters:
    ///   - candidates: the rules the event matched, in config order.
    ///   - event: the event.
    ///   - now: the time of the decision.
    /// - Returns: the action and the skipped candidates.
    public mutating func evaluate(_ candidates: [SurveyRule], event: Event, now: Date) -> SurveyDecision {
        var action = SurveyDecision.Action.none
        var chosen: String?
        var skipped: [SurveyDecision.Skip] = []
        for rule in candidates {
            if let chosen {
                skipped.append(.init(surveyID: rule.id, reason: .preempted(by: chosen)))
                continue
            }
            if let reason = eligibility(of: rule, for: event, now: now) {
                skipped.append(.init(surveyID: rule.id, reason: reason))
                continue
            }
            chosen = rule.id
            if let delay = rule.delaySeconds, delay > 0 {
                let due = now.addingTimeInterval(delay)
                pending[rule.id] = Pending(surveyID: rule.id, event: event, due: due)
                action = .schedule(rule, at: due)
            } else {
                notePresentation(of: rule, event: event, now: now)
                action = .present(rule)
            }
        }
        return SurveyDecision(action: action, skipped: skipped)
    }

    /// The delay of a scheduled survey ended: checks it again and presents it (noted) or skips it.
    /// - Parameters:
    ///   - surveyID: the survey whose delay ended.
    ///   - rule: its rule in the current config, or nil when the config no longer has it.
    ///   - now: the time of the decision.
    /// - Returns: the action; ``SurveyDecision/Action/none`` when nothing was pending.
    public mutating func delayEnded(surveyID: String, rule: SurveyRule?, now: Date) -> SurveyDecision {
        guard let waiting = pending.removeValue(forKey: surveyID) else { return SurveyDecision(action: .none) }
        guard let rule else {
            return SurveyDecision(action: .none, skipped: [.init(surveyID: surveyID, reason: .removedFromConfig)])
        }
        if let reason = eligibility(of: rule, for: waiting.event, now: now) {
            return SurveyDecision(action: .none, skipped: [.init(surveyID: surveyID, reason: reason)])
        }
        notePresentation(of: rule, event: waiting.event, now: now)
        return SurveyDecision(action: .present(rule))
    }

    /// The survey on screen was answered or dismissed: another may be shown.
    public mutating func presentationEnded(surveyID: String) {
        if onScreen?.surveyID == surveyID { onScreen = nil }
    }

    /// Forgets every pending delay and the survey on screen (the engine stopped).
    public mutating func reset() {
        pending.removeAll()
        onScreen = nil
    }

    private mutating func notePresentation(of rule: SurveyRule, event: Event, now: Date) {
        let userKey = Self.userKey(for: event.userId)
        var history = history(for: userKey)
        history.notePresentation(of: rule.id, sessionId: event.sessionId, at: now)
        histories[userKey] = history
        onScreen = OnScreen(surveyID: rule.id, event: event, since: now)
    }
}
