#if canImport(SwiftUI)
import SwiftUI
import TouchpointEvents

extension View {
    /// Records a screen view each time this view appears: a `screen` event named `name`
    /// (``ScreenViews/record(_:category:properties:in:)``, into the started SDK's recorder).
    ///
    /// ```swift
    /// CartView()
    ///     .touchpointScreen("Cart", category: "Shop")
    /// ```
    /// - Parameters:
    ///   - name: the screen's name.
    ///   - category: the screen's category, sent as Segment's `category`.
    ///   - properties: more about the screen.
    public func touchpointScreen(
        _ name: String, category: String? = nil, properties: [String: EventValue] = [:]
    ) -> some View {
        onAppear { ScreenViews.record(name, category: category, properties: properties) }
    }
}
#endif
