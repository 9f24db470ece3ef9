import ArgumentParser
import Foundation
import Logging
import Touchpoint

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `touchpoint send --collector URL --write-key K [--dir D]`: delivers a local log to a collector.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Deliver the events of a local log to a collector.",
        discussion: """
            Sends every event not yet acknowledged by this collector (the cursor is kept in \
            <dir>/state/delivery/), in Segment batches, retrying failures with backoff, and exits \
            when the collector has acknowledged them all. Shows a progress bar on a terminal and \
            one line per batch otherwise. Interrupted or killed, it resumes where it stopped.
              touchpoint send --collector http://127.0.0.1:8080 --write-key wk_test
            """)

    @Option(help: "The collector's base URL (or its /v1/batch URL).")
    var collector: String

    @Option(name: .customLong("write-key"), help: "The source's write key.")
    var writeKey: String

    @OptionGroup var directory: LogDirectoryOption

    @Option(name: .customLong("batch-events"), help: "Events per request (at most 2500).")
    var batchEvents = BatchLimits.segmentMaximumEvents

    @Option(help: "Give up after this many seconds (failures are retried until then).")
    var timeout: Double = 300

    @Flag(name: .customLong("fail-fast"), help: "Give up at the first failed request instead of retrying.")
    var failFast = false

    @Flag(name: .customLong("no-gzip"), help: "Send request bodies uncompressed.")
    var noGzip = false

    @Option(name: .customLong("max-requests-per-minute"), help: "A ceiling on requests per minute (default: none).")
    var maximumRequestsPerMinute: Double?

    @Flag(help: "Log what is sent, when, and why delivery waits.")
    var debug = false

    func validate() throws {
        guard let url = URL(string: collector), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            url.host != nil
        else { throw ValidationError("--collector: not an http or https URL: \(collector)") }
        guard batchEvents >= 1 else { throw ValidationError("--batch-events must be at least 1") }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }

    func run() async throws {
        let recorder = EventRecorder(directory: directory.url)
        var configuration = DeliveryConfiguration()
        configuration.dispatchInterval = -1
        configuration.batchLimits = BatchLimits(maximumEvents: batchEvents)
        configuration.gzipThreshold = noGzip ? nil : 1024
        configuration.maximumRequestsPerMinute = maximumRequestsPerMinute
        configuration.reachability = nil
        configuration.isDebugMode = debug
        let dispatcher = EventDispatcher(
            writeKey: writeKey, endpoint: URL(string: collector)!, recorder: recorder, configuration: configuration)
        let progress = DeliveryProgress(
            isTerminal: isatty(STDOUT_FILENO) == 1, totalBytes: dispatcher.backlog().bytes,
            destination: dispatcher.destination.batchURL.absoluteString)
        progress.start()
        let watcher = Task {
            for await status in dispatcher.statusUpdates() {
                progress.update(status) { dispatcher.backlog() }
            }
        }
        do {
            let report = try await dispatcher.dispatch(timeout: timeout, failFast: failFast)
            watcher.cancel()
            await watcher.value
            if !progress.isTerminal { progress.update(dispatcher.status) { dispatcher.backlog() } }
            progress.finish(dispatcher.status, report: report)
            await dispatcher.shutdown()
        } catch {
            watcher.cancel()
            await watcher.value
            let status = dispatcher.status
            await dispatcher.shutdown()
            progress.fail(status)
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }
}
