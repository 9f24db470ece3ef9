import Foundation

/// Shows a tapped app by opening its App Store web page (``AppStoreRequest/webURL``, with the
/// attribution tokens): the choice on platforms without `SKOverlay`, e.g. with SwiftUI's
/// `openURL` action on macOS.
///
/// ```swift
/// service.appStorePresenter = OpenURLAppStorePresenter { url in openURL(url) }
/// ```
@MainActor
public struct OpenURLAppStorePresenter: AppStorePresenter {
    private let open: @MainActor (URL) -> Void

    /// Creates a presenter.
    /// - Parameter open: opens a URL (SwiftUI's `openURL`, `NSWorkspace.shared.open`, …).
    public init(open: @escaping @MainActor (URL) -> Void) {
        self.open = open
    }

    public func presentAppStore(_ request: AppStoreRequest) {
        open(request.webURL)
    }
}
