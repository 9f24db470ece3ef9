/// The scenario data of one app, one ``KeyValueStore`` per ``Scope``.
///
/// ```swift
/// let store = DefaultStore(appID: "com.acme.app")
/// let checkout = store.named(.scenarioSession(id: "checkout"))
/// checkout.set("cart.total", .number(0))
/// ```
public protocol Store: AnyObject, Sendable {
    /// The app whose data this is.
    var appID: String { get }

    /// The store of one scope; the same scope always gives the same store.
    func named(_ scope: Scope) -> any KeyValueStore
}
