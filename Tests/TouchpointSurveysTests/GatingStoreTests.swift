import Foundation
import Testing
import Touchpoint
import TouchpointTesting

/// The gating files: one per user, atomic, surviving restarts, and harmless when corrupt.
struct GatingStoreTests {
    @Test func aHistoryIsSavedAndReadBack() throws {
        let directory = try TemporaryDirectory()
        let store = SurveyGatingStore(directory: directory.path + "/state/surveys")
        var history = SurveyUserHistory(userKey: "u1")
        history.notePresentation(of: "ask_rating", sessionId: Fixture.sessionA, at: Fixture.start)
        try store.save(history)
        #expect(store.path(for: "u1") == directory.path + "/state/surveys/u1.json")
        let (loaded, problem) = store.load(userKey: "u1")
        #expect(problem == nil)
        #expect(loaded == history)
        let (other, none) = store.load(userKey: "u2")
        #expect(other == SurveyUserHistory(userKey: "u2") && none == nil)
    }

    @Test func keysThatAreNotFileSafeNeverShareAFile() {
        let store = SurveyGatingStore(directory: "/x")
        #expect(store.path(for: "anon") == "/x/anon.json")
        #expect(store.path(for: "a/b") != store.path(for: "a_b"))
        #expect(store.path(for: "../etc").hasPrefix("/x/_."))
        #expect(!store.path(for: "a/b").dropFirst(3).contains("/"))
    }

    @Test(arguments: [
        "not json at all", "{\"version\":1}", "[]", "{\"version\":1,\"user\":\"someone-else\",\"surveys\":{}}", "",
    ])
    func aCorruptFileIsReportedMovedAsideAndIgnored(_ content: String) throws {
        let directory = try TemporaryDirectory()
        let store = SurveyGatingStore(directory: directory.path)
        let path = store.path(for: "u1")
        try Data(content.utf8).write(to: URL(fileURLWithPath: path))
        let (history, problem) = store.load(userKey: "u1")
        #expect(history == SurveyUserHistory(userKey: "u1"))
        #expect(problem?.code == .corrupt)
        #expect(problem?.path == path)
        #expect(FileManager.default.contents(atPath: path + ".corrupt") == Data(content.utf8), "kept, not lost")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aWriteIntoAnImpossibleDirectoryThrowsWithThePath() throws {
        let directory = try TemporaryDirectory()
        let blocker = directory.appending("file")
        try Data("x".utf8).write(to: blocker)
        let store = SurveyGatingStore(directory: blocker.path + "/surveys")
        let error = #expect(throws: SurveyStateError.self) { try store.save(SurveyUserHistory(userKey: "u1")) }
        #expect(error?.code == .writeFailed)
        #expect(error?.path == blocker.path + "/surveys/u1.json")
    }
}
