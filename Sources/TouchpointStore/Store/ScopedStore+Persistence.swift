import Foundation
import Logging
import TouchpointCore

extension ScopedStore {
    /// What this scope's writer did (all zero for scopes that do not persist).
    public var persistenceStatistics: PersistenceStatistics { flushState.withLock { $0.statistics } }

    /// Writes the values to the scope's file or `UserDefaults` entry now, if they changed since
    /// the last write. Persistent scopes also write on their own, coalesced (see
    /// ``StoreConfiguration/writeDelay``), and when the store is released. Does nothing for
    /// scopes that do not persist.
    ///
    /// Only valid data is written: values that break a validation rule are left out (or replaced
    /// by the rule's default).
    public func flush() {
        guard let persistence else { return }
        flushState.withLock { flush in
            let taken = guarded.read { state -> (StoreValue, Validator, UInt64) in
                state.writeScheduled = false
                return (state.materializedRoot(), state.validator, state.generation)
            }
            guard let (root, validator, generation) = taken else { return }
            guard generation != flush.persistedGeneration else {
                flush.statistics.skipped += 1
                return
            }
            let values = validator.validPortion(of: root).objectValue ?? [:]
            let document = StoreDocument(appID: context.appID, version: context.version, values: values)
            do throws(StoreError) {
                try persistence.write(document.encoded())
                flush.persistedGeneration = generation
                flush.statistics.writes += 1
                flush.retryDelay = 0
            } catch {
                flush.statistics.failures += 1
                flush.retryDelay = Swift.min(Swift.max(flush.retryDelay * 2, context.configuration.writeDelay, 0.1), 60)
                context.report(error)
                let delay = flush.retryDelay
                let claimed = guarded.read { state -> Bool in
                    guard !state.writeScheduled else { return false }
                    state.writeScheduled = true
                    return true
                }
                if claimed == true {
                    context.configuration.writeScheduler.schedule(after: delay) { [weak self] in self?.flush() }
                }
            }
        }
    }

    /// Schedules one coalesced write unless one is already pending.
    func scheduleWrite() {
        let claimed = guarded.read { state -> Bool in
            guard !state.writeScheduled else { return false }
            state.writeScheduled = true
            return true
        }
        guard claimed == true else { return }
        context.configuration.writeScheduler.schedule(after: context.configuration.writeDelay) { [weak self] in
            self?.flush()
        }
    }

    /// Reads the persisted document: corrupt data is set aside and reported (the store starts
    /// empty), and data of another major version is dropped.
    func load() {
        guard let persistence else { return }
        let bytes: [UInt8]?
        do {
            bytes = try persistence.read()
        } catch {
            context.report(error)
            return
        }
        guard let bytes else { return }
        let document: StoreDocument
        do {
            document = try StoreDocument(bytes: bytes, source: persistence.location)
        } catch {
            let kept = persistence.setAside(bytes)
            context.report(
                StoreError(
                    .corruptData, keyPath: persistence.location,
                    "\(error.message); starting empty\(kept.map { ", the unreadable data is kept at \($0)" } ?? "")"))
            return
        }
        let current = context.version
        guard document.version.major == current.major else {
            context.report(
                StoreError(
                    .dataDropped, keyPath: persistence.location,
                    "data of version \(document.version) dropped: the app's data version is now \(current) (a major bump drops scenario data)"
                ), level: .notice)
            _ = guarded.mutate { $0.markDirty() }
            scheduleWrite()
            return
        }
        _ = guarded.mutate { $0.reset(to: document.values, depth: 0) }
        flushState.withLock { flush in flush.persistedGeneration = guarded.read { $0.generation } ?? 0 }
    }
}
