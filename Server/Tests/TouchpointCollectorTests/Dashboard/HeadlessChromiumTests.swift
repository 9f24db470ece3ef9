import Foundation
import Testing
import TouchpointTesting

/// The browser the page tests drive keeps none of the test process's descriptors: a test's pipe
/// open while a browser starts must still reach its end when that test's child exits.
struct HeadlessChromiumTests {
    /// The `pipe:[inode]` names of the descriptors `process` holds.
    static func pipes(of process: pid_t) -> Set<String> {
        let directory = "/proc/\(process)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Set(
            entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\($0)") }
                .filter { $0.hasPrefix("pipe:") })
    }

    @Test(
        .enabled(if: HeadlessChromium.testsRun, "needs Chromium (CHROMIUM or /usr/bin/chromium)"),
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "needs /proc"))
    func theBrowserInheritsNoDescriptorOfTheTests() async throws {
        // As Foundation makes a child's output pipe: without close-on-exec.
        let pipe = Pipe()
        let name = try FileManager.default.destinationOfSymbolicLink(
            atPath: "/proc/self/fd/\(pipe.fileHandleForWriting.fileDescriptor)")
        #expect(name.hasPrefix("pipe:"))
        #expect(Self.pipes(of: getpid()).contains(name), "the check can see the test's own pipe")
        let held = try await onOwnThread { () throws -> Set<String> in
            let browser = try HeadlessChromium()
            defer { browser.quit() }
            return Self.pipes(of: browser.processIdentifier)
        }
        #expect(!held.isEmpty, "the browser's own DevTools pipes are seen")
        #expect(!held.contains(name), "the browser holds the test's pipe: \(held.sorted())")
    }
}
