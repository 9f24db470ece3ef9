// An interface stub of the StoreKit declarations Touchpoint uses, for type-checking its Apple-only
// code on Linux (scripts/check-apple.sh); test-only, never run. SKOverlay exists on iOS, iPadOS,
// Mac Catalyst (14 and later) and visionOS; elsewhere (-D APPLE_MACOS, APPLE_TVOS, APPLE_WATCHOS)
// the module is empty.
@_exported import Foundation

#if APPLE_IOS || APPLE_VISIONOS
import UIKit

@MainActor @preconcurrency
open class SKOverlay: NSObject {
    public enum Position: Int, Sendable {
        case bottom = 0
        case bottomRaised = 1
    }

    @MainActor @preconcurrency
    open class Configuration: NSObject {}

    @MainActor @preconcurrency
    open class AppConfiguration: Configuration {
        public init(appIdentifier: String, position: Position) {}
        open var appIdentifier: String { fatalError() }
        open var position: Position { fatalError() }
        open var campaignToken: String?
        open var providerToken: String?
    }

    public init(configuration: Configuration) {}
    open func present(in scene: UIWindowScene) {}
}
#endif
