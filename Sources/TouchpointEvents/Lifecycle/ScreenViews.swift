/// Screen views recorded for the app: what SwiftUI's `.touchpointScreen(_:)` modifier and UIKit's
/// `ScreenTrackingViewController` call, platform-neutral and testable.
///
/// ```swift
/// ScreenViews.record("Cart", category: "Shop")
/// ScreenViews.name(forViewController: "CartViewController")  // "Cart"
/// ```
public enum ScreenViews {
    private static let current = Locked<EventRecorder?>(nil)

    /// The recorder screen views go to: the started SDK's (`TouchpointSDK.start` sets it), else
    /// ``EventRecorder/shared``.
    public static var recorder: EventRecorder {
        get { current.withLock { $0 } ?? .shared }
        set { current.withLock { $0 = newValue } }
    }

    /// Records a `screen` event named `name` in ``recorder``; `category`, when given, is its
    /// `category` property (sent to the collector as Segment's `category`).
    /// - Returns: the event, or nil when the recorder refused it (opted out, too large).
    @discardableResult
    public static func record(
        _ name: String, category: String? = nil, properties: [String: EventValue] = [:],
        in recorder: EventRecorder? = nil
    ) -> Event? {
        var properties = properties
        if let category { properties["category"] = .string(category) }
        return (recorder ?? self.recorder).record(name, properties: properties, type: .screen)
    }

    /// The screen name for a view controller's type name, as Segment's SDKs make it:
    /// `CartViewController` → `Cart`, `ShopKit.ProductDetailsViewController` → `ProductDetails`,
    /// `Settings` → `Settings` (a name that would be empty is kept whole).
    public static func name(forViewController typeName: String) -> String {
        var name = Substring(typeName)
        if let dot = name.lastIndex(of: ".") { name = name[name.index(after: dot)...] }
        // A generic type's arguments are not part of the screen.
        if let bracket = name.firstIndex(of: "<") { name = name[..<bracket] }
        for suffix in ["ViewController", "Controller"] where name.hasSuffix(suffix) {
            return name.count > suffix.count ? String(name.dropLast(suffix.count)) : String(name)
        }
        return String(name)
    }
}
