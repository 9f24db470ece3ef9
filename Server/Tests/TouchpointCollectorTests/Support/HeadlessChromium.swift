import Foundation
import TouchpointCore
import TouchpointTesting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Debian's Chromium, headless, driven over the DevTools protocol on a pipe
/// (`--remote-debugging-pipe`: commands in on descriptor 3, answers out on 4, each a JSON
/// message ended by a NUL byte). Blocking: use it from a thread of its own (`onOwnThread`).
final class HeadlessChromium: @unchecked Sendable {
    // Safe: one thread drives a browser from launch to close.
    private let process: pid_t
    private let commands: Int32
    private let answers: Int32
    private var pending: [UInt8] = []
    private var nextID = 0
    private var exited = false
    private let profile: TemporaryDirectory
    /// The page's DevTools session.
    private var session = ""

    /// The browser's process.
    var processIdentifier: pid_t { process }

    /// The browser: `CHROMIUM` or `/usr/bin/chromium` (Debian's package, installed by `.ci/run`).
    static var executable: String { ProcessInfo.processInfo.environment["CHROMIUM"] ?? "/usr/bin/chromium" }

    /// Whether the browser tests run: when the browser is installed, or always when
    /// `TOUCHPOINT_REQUIRE_CHROMIUM=1` (CI), where a missing browser fails them. So `swift test`
    /// works on a fresh machine, and CI never silently skips the browser.
    static var testsRun: Bool {
        ProcessInfo.processInfo.environment["TOUCHPOINT_REQUIRE_CHROMIUM"] == "1"
            || FileManager.default.isExecutableFile(atPath: executable)
    }

    /// Starts the browser with one page of `width`×`height` CSS pixels.
    init(width: Int = 1280, height: Int = 900) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw TestFailure(
                "\(Self.executable) is missing: install Debian's chromium (.ci/run does) or set CHROMIUM")
        }
        let closeFrom = try SpawnedProcess.closeFrom()
        profile = try TemporaryDirectory(prefix: "chromium-profile")
        let toBrowser = try Self.makePipe()
        let fromBrowser = try Self.makePipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toBrowser.read, 3)
        posix_spawn_file_actions_adddup2(&actions, fromBrowser.write, 4)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Then every other descriptor is closed in the browser (see `SpawnedProcess.closeFrom`):
        // it would keep another test's pipe open, and that test's read to its end waiting.
        let closed = closeFrom(&actions, 5)
        let arguments = [
            Self.executable, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
            "--user-data-dir=\(profile.url.path)", "--window-size=\(width),\(height)", "about:blank",
        ]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = closed == 0 ? posix_spawn(&pid, Self.executable, &actions, nil, &argv, environ) : closed
        close(toBrowser.read)
        close(fromBrowser.write)
        guard status == 0 else {
            close(toBrowser.write)
            close(fromBrowser.read)
            throw TestFailure("posix_spawn \(Self.executable): error \(status)")
        }
        process = pid
        commands = toBrowser.write
        answers = fromBrowser.read
        let target = try call("Target.createTarget", ["url": "about:blank"])
        guard let targetId = target["targetId"]?.stringValue else { throw TestFailure("no target: \(target)") }
        let attached = try call("Target.attachToTarget", ["targetId": .string(targetId), "flatten": true])
        guard let session = attached["sessionId"]?.stringValue else { throw TestFailure("no session: \(attached)") }
        self.session = session
        _ = try call(
            "Emulation.setDeviceMetricsOverride",
            ["width": .int(width), "height": .int(height), "deviceScaleFactor": 1, "mobile": false], page: true)
        _ = try call("Page.enable", [:], page: true)
    }

    /// A pipe whose ends are above the descriptors the child receives, close-on-exec.
    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw TestFailure("pipe: errno \(errno)") }
        let read = fcntl(ends[0], F_DUPFD_CLOEXEC, 10)
        let write = fcntl(ends[1], F_DUPFD_CLOEXEC, 10)
        close(ends[0])
        close(ends[1])
        return (read, write)
    }

    deinit {
        close(commands)
        close(answers)
        if !exited {
            kill(process, SIGKILL)
            var status: Int32 = 0
            waitpid(process, &status, 0)
        }
    }

    // MARK: Protocol

    /// Sends a command and waits for its answer.
    /// - Parameter page: send it to the page's session instead of the browser.
    /// - Returns: the answer's `result`.
    @discardableResult
    func call(_ method: String, _ parameters: [String: JSONValue], page: Bool = false, seconds: Double = 60) throws
        -> JSONValue
    {
        nextID += 1
        let id = nextID
        var message: [String: JSONValue] = ["id": .int(id), "method": .string(method), "params": .object(parameters)]
        if page { message["sessionId"] = .string(session) }
        var bytes = JSONValue.object(message).jsonBytes()
        bytes.append(0)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(commands, $0.baseAddress, $0.count) }
            guard written > 0 else { throw TestFailure("writing to Chromium failed: errno \(errno)") }
            offset += written
        }
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            while let end = pending.firstIndex(of: 0) {
                let answer = try JSONParser.parse(Array(pending[..<end]))
                pending.removeSubrange(...end)
                guard answer["id"]?.intValue == id else { continue }  // an event, or an older answer
                if let error = answer["error"] { throw TestFailure("\(method): \(error.jsonString())") }
                return answer["result"] ?? .null
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw TestFailure("\(method): no answer from Chromium within \(seconds) s") }
            var poller = pollfd(fd: answers, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(left, 1) * 1000)) >= 0 else { continue }
            guard poller.revents != 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { read(answers, $0.baseAddress, $0.count) }
            guard count > 0 else { throw TestFailure("Chromium closed its DevTools pipe during \(method)") }
            pending.append(contentsOf: buffer[0..<count])
        }
    }

    /// Evaluates JavaScript in the page.
    /// - Returns: its value (JSON-serialisable values only).
    func evaluate(_ expression: String) throws -> JSONValue {
        let result = try call(
            "Runtime.evaluate", ["expression": .string(expression), "returnByValue": true, "awaitPromise": true],
            page: true)
        if let exception = result["exceptionDetails"] {
            throw TestFailure("\(expression): \(exception.jsonString())")
        }
        return result["result"]?["value"] ?? .null
    }

    /// Evaluates `expression` until it is `true`.
    /// - Throws: when `seconds` pass first; the failure shows `describe`'s value.
    func waitUntil(_ expression: String, seconds: Double = 60, describe: String = "location.href") throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if (try? evaluate(expression)) == .bool(true) { return }
            usleep(100_000)
        }
        throw TestFailure("waited \(seconds) s for \(expression); \(describe) = \((try? evaluate(describe)) ?? .null)")
    }

    /// Opens `url` and waits until the page has loaded.
    func open(_ url: String) throws {
        try call("Page.navigate", ["url": .string(url)], page: true)
        try waitUntil("document.readyState === 'complete' && location.href !== 'about:blank'")
    }

    /// Types text into the focused element and presses Enter, as a keyboard would.
    func type(_ text: String, thenEnter: Bool) throws {
        if !text.isEmpty { try call("Input.insertText", ["text": .string(text)], page: true) }
        guard thenEnter else { return }
        for type in ["keyDown", "keyUp"] {
            try call(
                "Input.dispatchKeyEvent",
                [
                    "type": .string(type), "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13,
                    "text": type == "keyDown" ? "\r" : "",
                ], page: true)
        }
    }

    /// Presses Tab `count` times.
    func tab(_ count: Int) throws {
        for _ in 0..<count {
            for type in ["keyDown", "keyUp"] {
                try call(
                    "Input.dispatchKeyEvent",
                    ["type": .string(type), "key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9], page: true)
            }
        }
    }

    /// A PNG of the viewport.
    func screenshot() throws -> [UInt8] {
        let result = try call("Page.captureScreenshot", ["format": "png"], page: true)
        guard let text = result["data"]?.stringValue, let data = Data(base64Encoded: text) else {
            throw TestFailure("no screenshot data")
        }
        return Array(data)
    }

    /// Asks the browser to quit and waits for it (killed after `seconds`).
    func quit(seconds: Double = 20) {
        _ = try? call("Browser.close", [:], seconds: seconds)
        let deadline = Date().addingTimeInterval(seconds)
        var status: Int32 = 0
        while Date() < deadline {
            if waitpid(process, &status, WNOHANG) == process {
                exited = true
                return
            }
            usleep(50_000)
        }
    }
}
