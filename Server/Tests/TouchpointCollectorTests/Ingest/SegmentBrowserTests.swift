import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// A web page on another origin sends events to the collector as analytics.js does, in a real
/// headless Chromium: the settings fetch, a single call as `text/plain` with the write key in the
/// body (no preflight), a batch with JSON and Basic auth (a preflight), and an admin route the
/// browser must refuse to let the page read.
struct SegmentBrowserTests {
    static func page(collector: String, writeKey: String) -> String {
        """
        <!doctype html><html><head><meta charset="utf-8"><title>shop</title></head><body><script>
        const api = \(JSONValue.string(collector).jsonString());
        const key = \(JSONValue.string(writeKey).jsonString());
        async function read(response) { return { status: response.status, body: await response.json() }; }
        window.run = async function () {
          const results = {};
          results.settings = await read(await fetch(api + '/v1/projects/' + key + '/settings'));
          const now = new Date().toISOString();
          results.track = await read(await fetch(api + '/v1/t', {
            method: 'POST', keepalive: true, headers: { 'Content-Type': 'text/plain' },
            body: JSON.stringify({
              type: 'track', event: 'Browser Button Clicked', messageId: 'ajs-track-1', anonymousId: 'anon-web',
              properties: { button: 'buy' }, timestamp: now, sentAt: now, writeKey: key,
              context: { library: { name: 'analytics.js', version: 'npm:next-1.70.0' }, page: { path: '/' } },
              integrations: {}, _metadata: { bundled: ['Segment.io'], unbundled: [], bundledIds: [] }
            })
          }));
          results.batch = await read(await fetch(api + '/v1/b', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'Authorization': 'Basic ' + btoa(key + ':') },
            body: JSON.stringify({ batch: [{ type: 'page', name: 'Home', messageId: 'ajs-page-1',
              anonymousId: 'anon-web', timestamp: now }], sentAt: now })
          }));
          try {
            await fetch(api + '/v1/query/counts', { headers: { 'Authorization': 'Bearer not-the-token' } });
            results.admin = 'readable';
          } catch (error) {
            results.admin = 'blocked';
          }
          return results;
        };
        </script></body></html>
        """
    }

    @Test(.enabled(if: HeadlessChromium.testsRun, "needs Chromium (CHROMIUM or /usr/bin/chromium)"))
    func aPageOnAnotherOriginSendsEventsAsAnalyticsJSDoes() async throws {
        let directory = try TemporaryDirectory(prefix: "segment-browser")
        let collectorHolder = Locked<String>("")
        let pageServer = try TestHTTPServer { request in
            guard request.target == "/" else { return TestHTTPResponse(status: 404) }
            return .text(
                Self.page(collector: collectorHolder.value, writeKey: "wk_browser_0123456789"),
                headers: ["Content-Type": "text/html; charset=utf-8"])
        }
        let pageOrigin = pageServer.baseURL.absoluteString
        var configuration = CollectorConfiguration(
            port: 0, dataDirectory: directory.appending("collector"), writeKey: "wk_browser_0123456789",
            corsOrigins: [pageOrigin])
        configuration.logger.logLevel = .warning
        let collector = try await CollectorServer(configuration: configuration).start()
        collectorHolder.withLock { $0 = collector.baseURL.absoluteString }
        do {
            let results = try await onOwnThread { () throws -> JSONValue in
                let browser = try HeadlessChromium()
                defer { browser.quit() }
                try browser.open(pageOrigin + "/")
                return try browser.evaluate("run()")
            }
            #expect(results["settings"]?["status"] == 200, "\(results)")
            #expect(
                results["settings"]?["body"]?["integrations"]?["Segment.io"]?["apiHost"]?.stringValue
                    == "127.0.0.1:\(collector.port)/v1")
            #expect(results["track"]?["status"] == 200, "\(results)")
            #expect(results["batch"]?["status"] == 200, "\(results)")
            #expect(results["admin"] == "blocked", "a page must not read the query API")

            let events = try await collector.services.query.events(source: "default").items
            #expect(Set(events.map(\.messageId)) == ["ajs-track-1", "ajs-page-1"])
            let track = try #require(events.first { $0.messageId == "ajs-track-1" })
            #expect(track.name == "Browser Button Clicked")
            #expect(track.message["properties"]?["button"] == "buy")
            #expect(track.message["writeKey"] == nil)
        } catch {
            try? await collector.shutdown()
            throw error
        }
        try await collector.shutdown()
    }
}
