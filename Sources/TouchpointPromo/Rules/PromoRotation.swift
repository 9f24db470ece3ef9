import Foundation
import TouchpointCore

/// A weighted choice of apps that is the same for one user on every launch and on every device
/// that uses the same key.
///
/// Each app gets a score from ``StableHash`` of the key and its id, `log(u) / weight` with
/// `u` in (0, 1) (weighted sampling without replacement, Efraimidis–Spirakis): the highest
/// scores win. An app with weight 2 is about twice as likely to win a place as one with
/// weight 1; weight 0 only fills places nothing else can; an app without a weight counts as 1.
/// Because every score depends only on the key and the app's own id, adding or removing an
/// app never reshuffles the others: a user's list changes only where it must.
///
/// The winners are returned in catalog order.
public enum PromoRotation {
    /// Chooses `count` of `apps` for `key`.
    /// - Parameters:
    ///   - count: how many to keep.
    ///   - apps: the candidates, in catalog order.
    ///   - key: the sticky key (a user id, plus anything else that should vary the choice).
    /// - Returns: the chosen apps, in catalog order.
    public static func choose(_ count: Int, from apps: [PromoApp], key: String) -> [PromoApp] {
        guard count < apps.count else { return apps }
        guard count > 0 else { return [] }
        let ranked = apps.indices.sorted { left, right in
            let (a, b) = (score(apps[left], key: key), score(apps[right], key: key))
            return a != b ? a > b : left < right
        }
        return ranked.prefix(count).sorted().map { apps[$0] }
    }

    /// The app's score for `key`: higher wins.
    static func score(_ app: PromoApp, key: String) -> Double {
        let weight = app.weight ?? 1
        guard weight > 0, weight.isFinite else { return -.infinity }
        // unitInterval is in [0, 1); shift into (0, 1) so log is finite.
        let unit = StableHash.unitInterval(key + "\u{1F}" + app.id)
        let u = (unit * Double(1 << 53) + 0.5) / Double(1 << 53)
        return log(u) / weight
    }
}
