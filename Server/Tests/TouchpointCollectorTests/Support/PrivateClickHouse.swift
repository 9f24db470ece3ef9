import Foundation
import Synchronization
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// A ClickHouse server of one test's own, for a test that kills it: Debian's `clickhouse-server`
/// (`CLICKHOUSE_SERVER` or `/usr/sbin/clickhouse-server`, 18.16) as a child process in the
/// foreground, configured as `.ci/run` configures the shared server, over a temporary directory.
/// ``kill()`` sends SIGKILL; ``restart()`` starts it again on the same data and port. The tests
/// sharing `TOUCHPOINT_TEST_CLICKHOUSE_URL` never see it.
///
/// It runs as the test's user (18.16 runs as root too, as CI's tests do). Its ports (HTTP, and the
/// native protocol on the next) are below the system's ephemeral range, so no client connection
/// takes them while the server is down between a kill and a restart.
final class PrivateClickHouse: Sendable {
    /// The server's program.
    static var executable: String {
        ProcessInfo.processInfo.environment["CLICKHOUSE_SERVER"] ?? "/usr/sbin/clickhouse-server"
    }

    /// Whether the tests that need one run: when the program is installed, or always when
    /// `TOUCHPOINT_REQUIRE_CLICKHOUSE=1` (CI), where a missing program fails them.
    static var testsRun: Bool {
        ClickHouseTestEnvironment.required || FileManager.default.isExecutableFile(atPath: executable)
    }

    /// Its HTTP interface, database `default`.
    let url: ClickHouseURL
    private let directory: TemporaryDirectory
    private let server = Mutex<SpawnedProcess?>(nil)

    private init(directory: TemporaryDirectory, port: Int) throws {
        self.directory = directory
        url = try ClickHouseURL("http://127.0.0.1:\(port)/default")
    }

    deinit { server.withLock { $0?.send(SIGKILL) } }

    /// Starts a server on a fresh directory and waits until it answers `SELECT 1`.
    /// - Throws: `TestFailure` when the program is missing, or the server exits or stays silent
    ///   for `timeout`.
    static func start(timeout: Duration = .seconds(60)) async throws -> PrivateClickHouse {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw TestFailure(
                "\(executable) is missing: install Debian's clickhouse-server (.ci/run does) or set CLICKHOUSE_SERVER")
        }
        var failure = ""
        // A port another program holds makes the server exit: another port is tried.
        for _ in 0..<5 {
            let directory = try TemporaryDirectory(prefix: "clickhouse-private")
            let port = Int.random(in: 10_000..<(ephemeralPorts() - 1))
            try configure(directory, port: port)
            let clickHouse = try PrivateClickHouse(directory: directory, port: port)
            do {
                try await clickHouse.launch(timeout: timeout)
                return clickHouse
            } catch let error as TestFailure where error.description.contains("Address already in use") {
                failure = error.description
            }
        }
        throw TestFailure("no free port for ClickHouse: \(failure)")
    }

    /// SIGKILL, and waits until the server is gone.
    func kill() async {
        guard let process = server.withLock({ $0 }) else { return }
        process.send(SIGKILL)
        _ = await process.exit()
    }

    /// Starts the server again on the same data and port (after ``kill()``) and waits until it
    /// answers `SELECT 1`.
    func restart(timeout: Duration = .seconds(60)) async throws {
        try await launch(timeout: timeout)
    }

    private func launch(timeout: Duration) async throws {
        let process = try SpawnedProcess(
            URL(fileURLWithPath: Self.executable), ["--config-file=\(directory.appending("config.xml").path)"],
            output: .file(directory.appending("stdout.log").path),
            errors: .file(directory.appending("stderr.log").path))
        server.withLock { $0 = process }
        let client = ClickHouseClient(url: url, timeout: .seconds(5), logger: PostgresTestEnvironment.logger)
        let deadline = ContinuousClock.now + timeout
        while (try? await client.ping()) == nil {
            let log = { (try? String(contentsOf: self.directory.appending("server.err.log"), encoding: .utf8)) ?? "" }
            if let ended = process.termination {
                await client.close()
                throw TestFailure("clickhouse-server exited with \(ended): \(log().suffix(2000))")
            }
            if ContinuousClock.now >= deadline {
                await client.close()
                await kill()
                throw TestFailure("clickhouse-server did not answer within \(timeout): \(log().suffix(2000))")
            }
            // A poll: asked again right after.
            do {
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                await client.close()
                throw error
            }
        }
        await client.close()
    }

    /// The first port of the system's ephemeral range (Linux's `ip_local_port_range`).
    private static func ephemeralPorts() -> Int {
        let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        let first = text?.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) }
        return max(first ?? 32_768, 10_002)
    }

    /// `config.xml` and `users.xml` as `.ci/run` writes them, with everything under `directory`.
    private static func configure(_ directory: TemporaryDirectory, port: Int) throws {
        let path = directory.path
        for folder in ["data", "tmp", "user_files", "format_schemas"] {
            try FileManager.default.createDirectory(at: directory.appending(folder), withIntermediateDirectories: true)
        }
        let config = """
            <?xml version="1.0"?>
            <yandex>
                <logger><level>warning</level><log>\(path)/server.log</log><errorlog>\(path)/server.err.log</errorlog></logger>
                <http_port>\(port)</http_port>
                <tcp_port>\(port + 1)</tcp_port>
                <listen_host>127.0.0.1</listen_host>
                <path>\(path)/data/</path>
                <tmp_path>\(path)/tmp/</tmp_path>
                <user_files_path>\(path)/user_files/</user_files_path>
                <format_schema_path>\(path)/format_schemas/</format_schema_path>
                <users_config>\(path)/users.xml</users_config>
                <default_profile>default</default_profile>
                <default_database>default</default_database>
                <timezone>UTC</timezone>
                <mark_cache_size>268435456</mark_cache_size>
                <uncompressed_cache_size>268435456</uncompressed_cache_size>
            </yandex>

            """
        let users = """
            <?xml version="1.0"?>
            <yandex>
                <profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
                <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
                <quotas><default></default></quotas>
            </yandex>

            """
        try Data(config.utf8).write(to: directory.appending("config.xml"))
        try Data(users.utf8).write(to: directory.appending("users.xml"))
    }
}
