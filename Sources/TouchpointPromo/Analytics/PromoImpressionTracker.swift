/// Which rows are on screen, so an impression counts once per appearance of a row however
/// often it is redrawn: the state behind ``PromoService/handleAppImpression(_:)`` and
/// ``PromoService/handleAppDisappear(_:)``, which map onto SwiftUI's `onAppear`/`onDisappear`.
struct PromoImpressionTracker: Sendable, Hashable {
    private(set) var visible: Set<String> = []

    /// Marks `appID` visible. Returns whether this is a new appearance (an impression to count).
    mutating func appeared(_ appID: String) -> Bool {
        visible.insert(appID).inserted
    }

    /// Marks `appID` gone; its next appearance counts again.
    mutating func disappeared(_ appID: String) {
        visible.remove(appID)
    }

    /// Forgets rows whose app is no longer listed (their views are gone with the list entry).
    mutating func keepOnly(_ appIDs: Set<String>) {
        visible.formIntersection(appIDs)
    }
}
