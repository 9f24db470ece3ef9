#if canImport(SwiftUI)
import SwiftUI
import TouchpointPromo

/// The "More Apps" rows for a settings screen: your other apps, with icon, name, category and
/// localized tagline; a tap opens the App Store in an `SKOverlay` on iOS.
///
/// Everything it shows and counts is decided by ``PromoService`` (tested on every platform);
/// this view only renders ``PromoService/displayState`` and forwards appearances and taps.
///
/// ```swift
/// List {
///     Section("More Apps") {
///         MoreAppsView(currentAppID: "myapp1")
///     }
/// }
/// ```
///
/// `MoreAppsView(currentAppID:)` reads `PromoConfig.defaultCatalogURL`: set it once at launch.
/// The view produces list rows; pull to refresh belongs to the enclosing `List`: create the
/// service yourself, pass it to ``init(service:)`` and call `forceRefresh()` from the list's
/// `.refreshable`.
public struct MoreAppsView: View {
    @State private var service: PromoService
    @Environment(\.openURL) private var openURL

    /// Rows for the catalog at `PromoConfig.defaultCatalogURL`.
    /// - Parameter currentAppID: this app's id in the catalog (never listed).
    public init(currentAppID: String) {
        self.init(config: PromoConfig(currentAppID: currentAppID))
    }

    /// Rows for `config`.
    /// - Parameter config: where the catalog is and how to list it.
    public init(config: PromoConfig) {
        self.init(config: config, eventDelegate: nil)
    }

    /// Rows for `config`, reporting impressions and taps to `eventDelegate` (held strongly).
    /// - Parameters:
    ///   - config: where the catalog is and how to list it.
    ///   - eventDelegate: receives every impression and tap.
    public init(config: PromoConfig, eventDelegate: (any PromoEventDelegate)?) {
        _service = State(
            initialValue: PromoService(
                config: config, eventDelegate: eventDelegate, appStorePresenter: Self.platformPresenter()))
    }

    /// Rows for a service the caller owns (to share it, refresh it, or choose its recorder).
    /// - Parameter service: the service to render.
    public init(service: PromoService) {
        _service = State(initialValue: service)
    }

    public var body: some View {
        // In a List, a Group's modifiers reach each row: every row's task asks the service,
        // which answers from its fresh cache or joins the request in flight.
        Group {
            switch service.displayState {
            case .loaded:
                ForEach(service.apps) { app in
                    Button {
                        service.handleAppTap(app)
                    } label: {
                        PromoAppRow(app: app, tagline: service.tagline(for: app))
                    }
                    .buttonStyle(.plain)
                    .onAppear { service.handleAppImpression(app) }
                    .onDisappear { service.handleAppDisappear(app) }
                }
            case .loading:
                ProgressView()
                    .frame(maxWidth: .infinity)
            case .error:
                Button {
                    Task { await service.forceRefresh() }
                } label: {
                    Label("Couldn't load more apps. Tap to retry.", systemImage: "exclamationmark.triangle")
                        .foregroundStyle(.secondary)
                }
                .buttonStyle(.plain)
            case .empty:
                EmptyView()
            }
        }
        .task {
            if service.appStorePresenter == nil {
                let open = openURL
                service.appStorePresenter = OpenURLAppStorePresenter { open($0) }
            }
            await service.loadApps()
        }
    }

    private static func platformPresenter() -> (any AppStorePresenter)? {
        #if canImport(StoreKit) && os(iOS)
        return SKOverlayAppStorePresenter()
        #else
        return nil
        #endif
    }
}
#endif
