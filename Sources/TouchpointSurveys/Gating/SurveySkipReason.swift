import Foundation
import TouchpointCore

/// Why a survey whose trigger fired was not shown.
public enum SurveySkipReason: Sendable, Hashable, CustomStringConvertible {
    /// `oncePerSession`: it was already shown in this session.
    case shownThisSession
    /// `oncePerUser`: it was already shown to this user (this wins over the cooldown).
    case shownToUser
    /// `cooldownSeconds`: it was shown to this user too recently; eligible again at the date.
    case cooldown(until: Date)
    /// `globalCooldownSeconds`: another survey was shown to this user too recently.
    case globalCooldown(until: Date)
    /// `sampleRate`: this user is not in the sample (sticky: the same user always is or is not).
    case sampledOut(rate: Double)
    /// A survey is on screen (only one at a time); its id.
    case surveyOnScreen(String)
    /// This survey is already waiting for its delay to end.
    case delayPending(until: Date)
    /// An earlier rule in the config was chosen for the same event; its id.
    case preempted(by: String)
    /// Its delay ended, but the config no longer has it.
    case removedFromConfig
    /// Its trigger's name matched but a property condition did not (simulations only).
    case propertiesDidNotMatch(String)

    /// A stable short name, for JSON output and counting: `cooldown`, `oncePerUser`, ….
    public var code: String {
        switch self {
        case .shownThisSession: return "oncePerSession"
        case .shownToUser: return "oncePerUser"
        case .cooldown: return "cooldown"
        case .globalCooldown: return "globalCooldown"
        case .sampledOut: return "sampling"
        case .surveyOnScreen: return "surveyOnScreen"
        case .delayPending: return "delayPending"
        case .preempted: return "preempted"
        case .removedFromConfig: return "removedFromConfig"
        case .propertiesDidNotMatch: return "noMatch"
        }
    }

    /// The reason in words, e.g. `gated by cooldown until 2026-01-02T09:00:00.000Z`.
    public var description: String {
        switch self {
        case .shownThisSession: return "already shown this session (oncePerSession)"
        case .shownToUser: return "already shown to this user (oncePerUser)"
        case .cooldown(let until): return "gated by cooldown until \(Timestamp.format(until))"
        case .globalCooldown(let until): return "gated by the global cooldown until \(Timestamp.format(until))"
        case .sampledOut(let rate): return "user not in the sample (sampleRate \(rate))"
        case .surveyOnScreen(let id): return "survey \(id) is on screen"
        case .delayPending(let until): return "already waiting for its delay (until \(Timestamp.format(until)))"
        case .preempted(let id): return "an earlier rule was chosen (\(id))"
        case .removedFromConfig: return "removed from the config while its delay ran"
        case .propertiesDidNotMatch(let detail): return "no match: \(detail)"
        }
    }
}
