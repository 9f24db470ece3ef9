import Foundation
import TouchpointCore
import TouchpointEvents

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Keeps each user's ``SurveyUserHistory`` in its own JSON file, written with ``AtomicFile``:
/// `<directory>/<user folder>.json`, where the directory is `<recorder base>/state/surveys` and
/// the folder name is the user key made file-safe as the event log does (`anon` for none).
///
/// A file that is not a valid history is reported, moved aside to `<file>.corrupt` (nothing is
/// lost) and treated as empty; it never stops surveys from working.
public struct SurveyGatingStore: Sendable {
    /// The directory of the history files.
    public let directory: String

    /// Creates a store over a directory (created on the first write).
    public init(directory: String) { self.directory = directory }

    /// The store a recorder's engine uses: `<recorder.directory>/state/surveys`.
    public init(recorder: EventRecorder) {
        self.init(directory: LogLayout(base: recorder.directory).statePath + "/surveys")
    }

    /// The file of a user key. Keys that are not file-safe as they are get a hash suffix, so
    /// two keys never share a file.
    public func path(for userKey: String) -> String {
        let folder = LogLayout.userFolder(for: userKey)
        let name = folder == userKey ? folder : folder + "-" + StableHash.hex(of: userKey)
        return directory + "/" + name + ".json"
    }

    /// Reads a user's history.
    /// - Parameter userKey: the user id or `anon`.
    /// - Returns: the history (empty when there is no file, or it was unusable) and the problem
    ///   found, if any.
    public func load(userKey: String) -> (history: SurveyUserHistory, problem: SurveyStateError?) {
        let path = path(for: userKey)
        let empty = SurveyUserHistory(userKey: userKey)
        let bytes: [UInt8]
        do {
            guard let read = try AtomicFile.read(path) else { return (empty, nil) }
            bytes = read
        } catch {
            return (empty, SurveyStateError(code: .unreadable, path: path, message: error.description))
        }
        do {
            let history = try SurveyUserHistory(json: JSONParser.parse(bytes))
            guard history.userKey == userKey else {
                return (empty, moveAside(path, "it belongs to user \(history.userKey), not \(userKey)"))
            }
            return (history, nil)
        } catch let problem as JSONProblem {
            return (empty, moveAside(path, problem.description))
        } catch {
            return (empty, moveAside(path, "\(error)"))
        }
    }

    /// Writes a user's history, replacing the file atomically.
    ///
    /// The write is not flushed to stable storage: the atomic rename already survives the app
    /// being killed, and a power loss could at worst forget the latest presentation (the
    /// survey might be shown once more), which does not justify an `fsync` per presentation.
    /// - Throws: ``SurveyStateError`` `writeFailed`.
    public func save(_ history: SurveyUserHistory) throws(SurveyStateError) {
        let path = path(for: history.userKey)
        do {
            try AtomicFile.write(history.json.jsonBytes(sortedKeys: true) + [0x0A], to: path, durable: false)
        } catch {
            throw SurveyStateError(code: .writeFailed, path: path, message: error.description)
        }
    }

    private func moveAside(_ path: String, _ message: String) -> SurveyStateError {
        _ = rename(path, path + ".corrupt")
        return SurveyStateError(code: .corrupt, path: path, message: message)
    }
}
