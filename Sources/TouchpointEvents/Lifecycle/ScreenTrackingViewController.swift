#if canImport(UIKit) && !os(watchOS)
import UIKit

/// A view controller that records a screen view each time it appears: a `screen` event named
/// after its type (`CartViewController` → `Cart`, ``ScreenViews/name(forViewController:)``), or
/// ``screenName`` when set. Subclass it instead of `UIViewController` to have a view controller's
/// screens recorded; Touchpoint does not swizzle UIKit's methods.
open class ScreenTrackingViewController: UIViewController {
    /// The screen's name; nil names it after the type.
    open var screenName: String? { nil }
    /// The screen's category, sent as Segment's `category`.
    open var screenCategory: String? { nil }

    override open func viewDidAppear(_ animated: Bool) {
        super.viewDidAppear(animated)
        ScreenViews.record(
            screenName ?? ScreenViews.name(forViewController: String(describing: type(of: self))),
            category: screenCategory)
    }
}
#endif
