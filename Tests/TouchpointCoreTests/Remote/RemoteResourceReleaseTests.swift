import Foundation
import Testing
import TouchpointTesting

@testable import TouchpointCore

/// Releasing a resource while its streams are open ends them instead of deadlocking.
struct RemoteResourceReleaseTests {
    /// Holds the resource so another thread can release it (a deadlock there cannot hang the test).
    final class Holder: @unchecked Sendable {
        // Safe: set before the releasing thread starts, then touched only by that thread.
        var resource: RemoteResource<Int>?
    }

    /// Streams of a resource whose release deadlocked: kept forever, because ending them would
    /// take the lock the stuck thread holds.
    static let stuck = Locked<[Any]>([])

    @Test func releasingAResourceWithOpenStreamsFinishesThem() async throws {
        let directory = try TemporaryDirectory(prefix: "remote-release")
        let holder = Holder()
        holder.resource = RemoteResource(
            url: URL(string: "http://127.0.0.1:9/never")!, cacheDirectory: directory.path,
            decodeJSON: { json in json.intValue ?? 0 })
        let values = holder.resource!.values()
        let snapshots = holder.resource!.snapshots()
        let released = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            holder.resource = nil
            released.signal()
        }
        guard released.wait(timeout: .now() + 10) == .success else {
            Self.stuck.withLock { $0.append(contentsOf: [values, snapshots] as [Any]) }
            Issue.record("releasing the resource did not finish within 10 s (deadlock)")
            return
        }
        var valueIterator = values.makeAsyncIterator()
        var snapshotIterator = snapshots.makeAsyncIterator()
        #expect(await valueIterator.next() == nil, "the value stream ended")
        #expect(await snapshotIterator.next() == nil, "the snapshot stream ended")
    }
}
