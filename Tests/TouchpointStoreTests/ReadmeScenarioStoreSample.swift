// The README's "Scenario store on the collector" sample, as written, inside a function so that
// the compiler checks it on every build (it needs a running collector, so it is not run here;
// Server/Tests/TouchpointIntegrationTests runs the same calls against a real one).
import Foundation
import TouchpointStore

func readmeScenarioStoreSample(writeKey: String, signature: String) async throws {
    // signature: from your backend, e.g. hmac.new(secret, user_id, hashlib.sha256).hexdigest()
    let user = HTTPStoreBackend.User(id: "u-42", signature: signature)
    let backend = HTTPStoreBackend(collector: URL(string: "http://127.0.0.1:8080")!, writeKey: writeKey, user: user)
    let sync = DefaultStore(appID: "shop", configuration: .init(backend: backend))
        .backendSync(namespace: "acme", scenarioID: "checkout")
    try await sync.pull()
    sync.store.set("cart.coupon", "SPRING")
    try await sync.push()
}
