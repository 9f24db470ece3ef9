import Foundation
import TouchpointCore

/// A task executor driven by one connection thread: the thread that waits for a handler's
/// answer runs the handler's jobs itself.
///
/// So a handler never needs a thread of Swift's cooperative pool, and a test that blocks pool
/// threads (a synchronous test reading a socket, say) cannot starve the server it is talking to.
final class ConnectionExecutor: TaskExecutor {
    private let jobs = Locked<[UnownedJob]>([])
    private let wakeUp = DispatchSemaphore(value: 0)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        wakeUp.signal()
    }

    /// Makes ``run(until:deadline:)`` check its condition again.
    func wake() { wakeUp.signal() }

    /// Runs enqueued jobs on the calling thread until `isDone` or the deadline.
    /// - Returns: false when the deadline passed first.
    func run(until isDone: () -> Bool, deadline: DispatchTime) -> Bool {
        while true {
            let batch = jobs.withLock { jobs in
                defer { jobs.removeAll() }
                return jobs
            }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            if isDone() { return true }
            if batch.isEmpty && wakeUp.wait(timeout: deadline) == .timedOut { return isDone() }
        }
    }
}
