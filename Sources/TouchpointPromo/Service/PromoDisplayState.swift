/// What a "More Apps" view should show now: the seed's four UI states, decided by
/// ``PromoService/displayState`` so the view itself decides nothing.
public enum PromoDisplayState: Sendable, Hashable {
    /// Nothing to show yet and a load is pending or running: a progress indicator.
    case loading
    /// ``PromoService/apps`` has rows (perhaps from a stale cache while the network fails).
    case loaded
    /// The catalog loaded but lists nothing for this app: show nothing.
    case empty
    /// No catalog at all (network and cache failed, or no catalog URL): an error row with retry.
    case error(PromoError)
}
