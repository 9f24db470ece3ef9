import Foundation
import InMemoryLogging
import Logging
import TouchpointCore
import TouchpointEvents
import TouchpointPromo
import TouchpointTesting

/// A catalog server, a temporary base directory with a recorder, a manual clock, and services
/// built over them: what an app has, with the network on 127.0.0.1.
@MainActor
final class PromoFixture {
    let server: TestHTTPServer
    let directory: TemporaryDirectory
    let clock = ManualClock()
    let recorder: EventRecorder
    let transport = URLSessionTransport()
    let logs = InMemoryLogHandler()

    init(handler: @escaping TestHTTPServer.Handler = { _ in TestHTTPResponse(status: 404) }) throws {
        server = try TestHTTPServer(handler: handler)
        directory = try TemporaryDirectory(prefix: "promo-test")
        var configuration = EventRecorderConfiguration()
        configuration.clock = clock
        recorder = EventRecorder(directory: directory.url, configuration: configuration)
    }

    var catalogURL: URL { server.url("/apps.json") }

    func config(
        currentAppID: String = "a",
        locale: String = "en",
        userID: String? = nil,
        maximumApps: Int? = nil,
        ttl: TimeInterval = 60
    ) -> PromoConfig {
        PromoConfig(
            jsonURL: catalogURL,
            currentAppID: currentAppID,
            locale: locale,
            userID: userID,
            maximumApps: maximumApps,
            providerToken: "12345",
            campaignToken: "settings-more-apps",
            resource: RemoteResourceConfiguration(cacheTTL: ttl, requestTimeout: 5, jitterSeed: 1)
        )
    }

    func service(
        _ config: PromoConfig? = nil,
        delegate: (any PromoEventDelegate)? = nil,
        presenter: (any AppStorePresenter)? = nil,
        recording: Bool = true
    ) -> PromoService {
        let handler = logs
        return PromoService(
            config: config ?? self.config(),
            eventDelegate: delegate,
            recorder: recording ? recorder : nil,
            appStorePresenter: presenter,
            transport: transport,
            clock: clock,
            logger: Logger(label: "promo-test") { _ in handler }
        )
    }

    /// The names and properties of the promo events in the recorder's log, oldest first.
    func recordedPromoEvents() async -> [RecordedEvent] {
        await recorder.allEvents().filter { $0.name.hasPrefix("promo_") }.map {
            RecordedEvent(name: $0.name, properties: $0.properties)
        }
    }

    /// The files under the recorder's `cache/` directory.
    var cacheFiles: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.path + "/cache")) ?? []
    }
}

/// An event as the log holds it, reduced to what promo tests compare.
struct RecordedEvent: Equatable {
    var name: String
    var properties: [String: JSONValue]
}

/// Records every App Store request instead of showing it: the real `SKOverlay` cannot run here.
@MainActor
final class RecordingAppStorePresenter: AppStorePresenter {
    private(set) var requests: [AppStoreRequest] = []

    func presentAppStore(_ request: AppStoreRequest) { requests.append(request) }
}

/// Collects the events a service emits, in order.
@MainActor
final class RecordingDelegate: PromoEventDelegate {
    private(set) var events: [PromoEvent] = []

    func promoService(_ service: PromoService, didEmit event: PromoEvent) { events.append(event) }
}
