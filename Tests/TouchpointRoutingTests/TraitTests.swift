import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointRouting
import TouchpointTesting

@Suite(.timeLimit(.minutes(2)))
struct TraitTests {
    @Test func traitsSurviveANewRecorderAndTracker() async throws {
        let directory = try TemporaryDirectory(prefix: "routing-traits")
        do {
            let recorder = EventRecorder(directory: directory.url)
            let tracker = GlobalTracker(recorder: recorder)
            defer { tracker.stopTracking() }
            tracker.update(EmailProperty(value: "a@b.c"))
            tracker.update(AgeProperty(value: 40))
            await recorder.startSession(userID: "user-1")
            tracker.update(EmailProperty(value: "user@b.c"))
            recorder.record("identify", properties: ["plan": "pro"], type: .identify)
            #expect(await tracker.traits(forUserID: "user-1") == ["email": "user@b.c", "plan": "pro"])
        }
        let path = directory.path + "/state/traits.json"
        #expect(FileManager.default.fileExists(atPath: path))

        let recorder = EventRecorder(directory: directory.url)
        let tracker = GlobalTracker(recorder: recorder)
        defer { tracker.stopTracking() }
        #expect(await tracker.traits(forUserID: nil) == ["email": "a@b.c", "age": 40])
        #expect(await tracker.traits(forUserID: "user-1") == ["email": "user@b.c", "plan": "pro"])
        #expect(await tracker.traits(forUserID: "someone else") == [:])

        // The new recorder continues user-1's session, so the updates are that user's.
        tracker.update(AgeProperty(value: 41))
        tracker.update(EmailProperty(value: nil))  // clears the trait
        #expect(await tracker.traits(forUserID: "user-1") == ["plan": "pro", "age": 41])
        #expect(await tracker.traits(forUserID: nil) == ["email": "a@b.c", "age": 40])
    }

    /// A reset (a sign-out) starts a new anonymous user: the previous anonymous traits are not
    /// theirs, a signed-in user's stay that user's, and what is recorded after the reset counts.
    @Test func aResetForgetsTheAnonymousTraitsOnly() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        harness.tracker.update(AgeProperty(value: 40))
        await harness.recorder.startSession(userID: "user-1")
        harness.tracker.update(EmailProperty(value: "user@b.c"))
        harness.recorder.resetIdentity()
        harness.tracker.update(EmailProperty(value: "next@b.c"))
        #expect(await harness.tracker.traits(forUserID: nil) == ["email": "next@b.c"])
        #expect(await harness.tracker.traits(forUserID: "user-1") == ["email": "user@b.c"])
        let text = try String(contentsOfFile: harness.directory.path + "/state/traits.json", encoding: .utf8)
        #expect(!text.contains("40"), "the previous anonymous user's traits are gone from disk too")
    }

    @Test func theFileIsPlainSortedJSON() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        harness.tracker.update(EmailProperty(value: "a@b.c"))
        _ = await harness.tracker.traits(forUserID: nil)
        let text = try String(contentsOfFile: harness.directory.path + "/state/traits.json", encoding: .utf8)
        #expect(text == "{\"anonymous\":{\"email\":\"a@b.c\"},\"users\":{}}\n")
    }

    @Test func aDamagedFileIsMovedAsideAndTraitsStartEmpty() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let path = harness.directory.path + "/state/traits.json"
        try FileManager.default.createDirectory(
            atPath: harness.directory.path + "/state", withIntermediateDirectories: true)
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
        harness.tracker.update(AgeProperty(value: 3))
        #expect(await harness.tracker.traits(forUserID: nil) == ["age": 3])
        let aside = try String(contentsOfFile: path + ".damaged", encoding: .utf8)
        #expect(aside == "{not json")
    }

    @Test func clearingTheRecorderForgetsTheTraits() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        harness.tracker.update(AgeProperty(value: 3))
        #expect(await harness.tracker.traits(forUserID: nil) == ["age": 3])
        await harness.recorder.clear()
        #expect(await harness.tracker.traits(forUserID: nil) == [:])
        #expect(!FileManager.default.fileExists(atPath: harness.directory.path + "/state/traits.json"))
    }

    @Test func generatedEventsFollowTheirProperty() async throws {
        let harness = try RoutingHarness()
        defer { harness.tracker.stopTracking() }
        let adapter = InMemoryAdapter()
        harness.tracker.startTracking(adapters: [adapter])
        harness.tracker.update(Renamed(value: "Alfred"))
        #expect(await harness.delivered())
        #expect(
            adapter.deliveries == [
                .property(identifier: "name", value: "Alfred", type: "Renamed"),
                .event(name: "User: Renamed", metadata: ["to": "Alfred"], type: "UserRenamed"),
            ])
        #expect(await harness.loggedNames() == ["identify", "User: Renamed"])
    }
}

struct Renamed: TrackableProperty {
    let identifier = "name"
    let value: String
    var trackedValue: (any TrackableValueType)? { value }
    func generateUpdateEvents() -> [any TrackableEvent] { [UserRenamed(to: value)] }
}

struct UserRenamed: TrackableEvent {
    let to: String
    let identifier = EventIdentifier(object: "User", action: "Renamed")
    var metadata: [String: Any] { ["to": to] }
}
