import ArgumentParser
import Foundation
import Logging
import Touchpoint
import TouchpointCollector

/// `touchpoint demo`: simulated users run an app through the real SDK against a collector, then
/// the dashboard shows what they did.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Simulate users of an app through the real SDK, deliver to a collector, and open the dashboard.",
        discussion: """
            Each simulated user records events (typed events through a tracker and its adapter, a cart \
            in the scenario store), answers surveys from the collector's survey config (by a seeded \
            random choice, or in the terminal with --interactive), sees and taps promoted apps from its \
            catalog, and delivers everything to the collector. Without --collector, a collector starts \
            here (SQLite in a fresh temporary directory unless --data says where) and keeps running \
            for the dashboard until Ctrl-C (--exit stops it when the demo is done).
              touchpoint demo
              touchpoint demo --collector http://127.0.0.1:8080 --write-key … --admin-token …
            """)

    @Option(help: "A running collector's base URL; none starts one here.")
    var collector: String?

    @Option(name: .customLong("write-key"), help: "The collector's write key (env TOUCHPOINT_WRITE_KEY).")
    var writeKey: String?

    @Option(
        name: .customLong("admin-token"),
        help:
            "The admin token, to store the demo's survey config and catalog when the collector has none (env TOUCHPOINT_ADMIN_TOKEN)."
    )
    var adminToken: String?

    @Option(help: "How many users to simulate.")
    var users = 5

    @Flag(help: "Answer the surveys yourself, in the terminal.")
    var interactive = false

    @Option(help: "The seed of the random choices (the same seed simulates the same visits).")
    var seed: UInt64 = 1

    @Option(help: "Port of the embedded collector (0 picks a free one).")
    var port = 8080

    @Option(help: "Data directory of the embedded collector (default: a new temporary directory).")
    var data: String?

    @Flag(help: "Stop the embedded collector when the demo is done instead of serving the dashboard.")
    var exit = false

    func validate() throws {
        guard users >= 1, users <= 1000 else { throw ValidationError("--users must be 1 to 1000") }
        if let collector {
            guard let url = URL(string: collector), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host != nil
            else { throw ValidationError("--collector: not an http or https URL: \(collector)") }
            guard writeKey ?? ProcessInfo.processInfo.environment["TOUCHPOINT_WRITE_KEY"] != nil else {
                throw ValidationError("--collector needs --write-key (or TOUCHPOINT_WRITE_KEY)")
            }
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        if let collector {
            let base = URL(string: collector)!
            let devices = FileManager.default.temporaryDirectory.appendingPathComponent(
                "touchpoint-demo-devices-\(UUID().uuidString)", isDirectory: true)
            let simulation = simulation(
                collector: base, writeKey: writeKey ?? environment["TOUCHPOINT_WRITE_KEY"] ?? "",
                adminToken: adminToken ?? environment["TOUCHPOINT_ADMIN_TOKEN"], devices: devices)
            let report = try await simulation.run()
            print(Self.summary(report, dashboard: base.appendingPathComponent("dashboard"), adminToken: nil))
            return
        }

        let dataDirectory =
            data.map { URL(fileURLWithPath: $0, isDirectory: true).standardizedFileURL }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                "touchpoint-demo-\(UUID().uuidString)", isDirectory: true)
        var configuration = CollectorConfiguration(port: port, dataDirectory: dataDirectory)
        configuration.validators = .touchpoint
        configuration.logger.logLevel = .warning
        let server = CollectorServer(configuration: configuration)
        if exit {
            let running = try await server.start()
            do {
                try await runEmbedded(running, dataDirectory: dataDirectory)
            } catch {
                try? await running.shutdown()
                throw error
            }
            try await running.shutdown()
            // A temporary collector that has stopped is of no more use.
            if data == nil { try? FileManager.default.removeItem(at: dataDirectory) }
            return
        }
        try await server.run { running in
            Task {
                do {
                    try await runEmbedded(running, dataDirectory: dataDirectory)
                } catch {
                    FileHandle.standardError.write(
                        Data(
                            "error: the demo stopped: \(error)\nThe collector keeps running; stop it with Ctrl-C.\n"
                                .utf8))
                }
            }
        }
    }

    private func runEmbedded(_ running: RunningCollector, dataDirectory: URL) async throws {
        StandardOutput.write(
            "Collector listening on \(running.baseURL.absoluteString) (data in \(dataDirectory.path))\n")
        let simulation = simulation(
            collector: running.baseURL, writeKey: running.writeKey, adminToken: running.adminToken,
            devices: dataDirectory.appendingPathComponent("devices", isDirectory: true))
        let report = try await simulation.run()
        StandardOutput.write(
            Self.summary(
                report, dashboard: running.baseURL.appendingPathComponent("dashboard"), adminToken: running.adminToken)
                + (exit ? "\n" : "\nThe collector keeps running for the dashboard; stop it with Ctrl-C.\n"))
    }

    private func simulation(collector: URL, writeKey: String, adminToken: String?, devices: URL) -> DemoSimulation {
        DemoSimulation(
            collector: collector, writeKey: writeKey, adminToken: adminToken, users: users, seed: seed,
            interactive: interactive, directory: devices, write: { StandardOutput.write($0) })
    }

    static func summary(_ report: DemoSimulation.Report, dashboard: URL, adminToken: String?) -> String {
        var lines = [
            "",
            "Simulated \(report.users) users in \(report.sessions) sessions; \(report.eventsDelivered) events delivered.",
            "Dashboard: \(dashboard.absoluteString)",
        ]
        if let adminToken { lines.append("Sign in with the admin token: \(adminToken)") }
        return lines.joined(separator: "\n")
    }
}
