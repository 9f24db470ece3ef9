import Foundation
import TouchpointEvents

/// An ``EventRecorder`` over a fresh temporary directory on a ``ManualClock``: what a test of
/// code that records needs, and a way to open the same log again as after a relaunch.
///
/// ```swift
/// let fixture = try RecorderFixture()
/// let event = try #require(fixture.recorder.record("checkout_success"))
/// let session = try #require(await fixture.recorder.currentSession())
/// #expect(try Event(jsonLine: fixture.lines(of: session)[0]) == event)
/// fixture.clock.advance(by: 60)
/// let relaunched = fixture.relaunch()  // the same directory and clock
/// #expect(relaunched.record("after")?.sessionId == session.id)
/// ```
public struct RecorderFixture: Sendable {
    /// The recorder's directory, deleted when the last copy of the fixture is released.
    public let directory: TemporaryDirectory
    /// The recorder's clock; it moves only when told to.
    public let clock: ManualClock
    /// The recorder.
    public let recorder: EventRecorder

    /// Creates a recorder over a fresh directory on a new manual clock.
    /// - Parameter configure: changes to the recorder's configuration (its clock is already set).
    /// - Throws: when the temporary directory cannot be created.
    public init(configure: (inout EventRecorderConfiguration) -> Void = { _ in }) throws {
        try self.init(directory: TemporaryDirectory(prefix: "recorder"), clock: ManualClock(), configure: configure)
    }

    /// Creates a recorder over `directory` on `clock`: another fixture's, to play a relaunch that
    /// keeps using a fixture's helpers.
    /// - Parameters:
    ///   - directory: the recorder's directory.
    ///   - clock: the recorder's clock.
    ///   - configure: changes to the recorder's configuration (its clock is already set).
    public init(
        directory: TemporaryDirectory, clock: ManualClock,
        configure: (inout EventRecorderConfiguration) -> Void = { _ in }
    ) {
        self.directory = directory
        self.clock = clock
        recorder = EventRecorder(directory: directory.url, configuration: Self.configuration(clock, configure))
    }

    /// Another recorder over the same directory and clock, as after a relaunch of the app.
    /// - Parameter configure: changes to the new recorder's configuration.
    /// - Returns: the new recorder.
    public func relaunch(configure: (inout EventRecorderConfiguration) -> Void = { _ in }) -> EventRecorder {
        EventRecorder(directory: directory.url, configuration: Self.configuration(clock, configure))
    }

    /// The path of `session`'s `events.jsonl` in the recorder's log.
    public func eventsFile(_ session: EventSession) -> String {
        directory.path + "/"
            + LogLayout(base: directory.url).relativeSessionDirectory(userId: session.userId, sessionId: session.id)
            + "/events.jsonl"
    }

    /// The lines of `session`'s `events.jsonl`, as written (the last is empty when the file ends
    /// with a newline). A mapped log's file is grown ahead of its records: only its records
    /// (``MappedLogFile/recordsLength(ofFileAt:terminator:)``) are read.
    /// - Throws: when the file cannot be read.
    public func lines(of session: EventSession) throws -> [String] {
        let path = eventsFile(session)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        if let length = MappedLogFile.recordsLength(ofFileAt: path) { bytes = bytes.prefix(Int(length)) }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
    }

    private static func configuration(
        _ clock: ManualClock, _ configure: (inout EventRecorderConfiguration) -> Void
    ) -> EventRecorderConfiguration {
        var configuration = EventRecorderConfiguration()
        configuration.clock = clock
        configure(&configuration)
        return configuration
    }
}
