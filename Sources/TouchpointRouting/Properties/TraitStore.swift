import Foundation
import Logging
import TouchpointCore
import TouchpointEvents

/// The users' current traits, kept in `<base>/state/traits.json`.
///
/// The recorder's callback only queues each `identify` event's traits; a background queue
/// merges them and rewrites the file atomically, so the record path never touches the disk for
/// traits. The file holds one object of traits per user:
///
/// ```json
/// {"anonymous":{"plan":"free"},"users":{"user-123":{"email":"a@b.c"}}}
/// ```
///
/// A trait recorded as `null` is removed. A damaged file is moved aside to
/// `traits.json.damaged` (and reported), and the traits start empty.
final class TraitStore: Sendable {
    let path: String
    private let logger: Logger
    private let queue = DispatchQueue(label: "touchpoint.routing.traits", qos: .utility)
    private let state = Locked(State())

    private struct State {
        /// In recording order; nil traits: forget the anonymous user's (a reset).
        var pending: [(userId: String?, traits: [String: EventValue]?)] = []
        var scheduled = false
    }

    /// Read and written only on `queue`.
    private let stored = Locked<Traits?>(nil)

    private struct Traits {
        var anonymous: [String: EventValue] = [:]
        var users: [String: [String: EventValue]] = [:]
    }

    init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    /// Queues an `identify` event's traits (cheap: called while the recorder holds its lock).
    func merge(userId: String?, traits: [String: EventValue]) {
        enqueue(userId: userId, traits: traits)
    }

    /// Forgets the anonymous user's traits after what was queued before (the recorder started a
    /// new anonymous user): the next person on the device does not inherit them.
    func forgetAnonymous() {
        enqueue(userId: nil, traits: nil)
    }

    private func enqueue(userId: String?, traits: [String: EventValue]?) {
        let schedule = state.withLock { state in
            state.pending.append((userId, traits))
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if schedule { queue.async { self.applyPending() } }
    }

    /// The traits of a user (nil: the anonymous user), after every queued update.
    func traits(forUserID userId: String?) async -> [String: EventValue] {
        await withCheckedContinuation { continuation in
            queue.async {
                self.applyPending()
                let traits = self.stored.withLock { stored in
                    if stored == nil { stored = self.load() }
                    return userId.map { stored?.users[$0] ?? [:] } ?? stored?.anonymous ?? [:]
                }
                continuation.resume(returning: traits)
            }
        }
    }

    /// Forgets every trait (the recorder deleted its state folder).
    func clear() {
        state.withLock { $0.pending.removeAll() }
        queue.async {
            self.stored.withLock { $0 = Traits() }
            do {
                if FileManager.default.fileExists(atPath: self.path) {
                    try FileManager.default.removeItem(atPath: self.path)
                }
            } catch {
                self.logger.error("cannot delete \(self.path): \(error)")
            }
        }
    }

    // MARK: On the queue

    private func applyPending() {
        let pending = state.withLock { state in
            defer {
                state.pending.removeAll()
                state.scheduled = false
            }
            return state.pending
        }
        guard !pending.isEmpty else { return }
        let bytes: [UInt8] = stored.withLock { stored in
            var traits = stored ?? load()
            for (userId, update) in pending {
                if let update, let userId {
                    traits.users[userId, default: [:]].apply(update)
                } else if let update {
                    traits.anonymous.apply(update)
                } else {
                    traits.anonymous = [:]
                }
            }
            stored = traits
            var writer = JSONWriter(capacity: 256, sortsKeys: true)
            writer.value(
                .object([
                    "anonymous": .object(traits.anonymous),
                    "users": .object(traits.users.mapValues { .object($0) }),
                ]))
            writer.newline()
            return writer.bytes
        }
        do {
            try AtomicFile.write(bytes, to: path)
        } catch {
            logger.error("cannot keep the user's traits: \(error); they stay in memory for this run")
        }
    }

    private func load() -> Traits {
        let bytes: [UInt8]
        do {
            guard let read = try AtomicFile.read(path) else { return Traits() }
            bytes = read
        } catch {
            logger.error("cannot read the user's traits: \(error); starting empty")
            return Traits()
        }
        do {
            let value = try JSONParser.parse(bytes)
            guard let anonymous = value["anonymous"]?.objectValue, let users = value["users"]?.objectValue else {
                throw JSONProblem(path: .root, message: "expected an object with \"anonymous\" and \"users\" objects")
            }
            var traits = Traits(anonymous: anonymous)
            for (userId, member) in users {
                guard let object = member.objectValue else {
                    throw JSONProblem(
                        path: JSONPath(components: [.key("users"), .key(userId)]), message: "not an object")
                }
                traits.users[userId] = object
            }
            return traits
        } catch {
            let aside = path + ".damaged"
            logger.error("\(path) is damaged (\(error)); moved to \(aside), starting with no traits")
            try? FileManager.default.removeItem(atPath: aside)
            try? FileManager.default.moveItem(atPath: path, toPath: aside)
            return Traits()
        }
    }
}

extension Dictionary where Key == String, Value == EventValue {
    /// Sets each trait of `update`, removing those set to `null`.
    fileprivate mutating func apply(_ update: [String: EventValue]) {
        for (key, value) in update {
            if value.isNull { removeValue(forKey: key) } else { self[key] = value }
        }
    }
}
