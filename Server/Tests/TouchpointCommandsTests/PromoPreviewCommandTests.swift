import ArgumentParser
import Foundation
import Testing
import TouchpointCore
import TouchpointPromo
import TouchpointTesting

@testable import TouchpointCommands

/// `touchpoint promo preview` over catalog files and a real server on 127.0.0.1: parsed from
/// arguments and run in process, and (a few cases, sparing the machine's two cores) as the
/// built tool in a child process, the way a user runs it.
struct PromoPreviewCommandTests {
    /// Parses `arguments` as the tool would and runs the command without printing.
    static func preview(_ arguments: [String]) async throws -> PromoCommand.Preview.Result {
        await (try PromoCommand.Preview.parse(arguments)).preview()
    }

    struct Outcome {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs the tool and collects its output; the process is killed after `timeout` seconds.
    static func touchpoint(_ arguments: [String], timeout: Double = 60) async throws -> Outcome {
        let result = try await ChildProcess.run(ChildProcess.builtProduct("touchpoint"), arguments, timeout: timeout)
        if result.timedOut {
            Issue.record("touchpoint \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
        }
        return Outcome(status: result.status, output: result.output, errors: result.errors)
    }

    /// The seed's catalog plus an insecure entry and a rule naming an unknown app.
    static func catalogWithProblems() throws -> JSONValue {
        guard case .object(var root) = try JSONParser.parse(PromoCatalogs.seedQuickStart),
            case .array(var apps) = root["apps"]!
        else { throw JSONProblem(path: .root, message: "fixture") }
        apps.append(PromoCatalogs.app("myapp3", icon: "http://example.com/icon3.png"))
        apps.append(
            PromoCatalogs.app("myapp4", name: "My App 4", category: "Games", tagline: ["ko": "게임", "en": "Games"]))
        root["apps"] = .array(apps)
        root["promoRules"] = ["myapp1": ["myapp2", "myapp4", "myapp9"]]
        return .object(root)
    }

    static func write(_ json: JSONValue, in directory: TemporaryDirectory) throws -> String {
        let path = directory.path + "/apps.json"
        try AtomicFile.write(json.jsonBytes(sortedKeys: true), to: path)
        return path
    }

    @Test func theToolPrintsTheListInTheUsersLocaleWithEveryProblem() async throws {
        let directory = try TemporaryDirectory(prefix: "promo-cli")
        let path = try Self.write(try Self.catalogWithProblems(), in: directory)
        let run = try await Self.touchpoint([
            "promo", "preview", "--catalog", path, "--app", "myapp1", "--locale", "ko",
        ])
        #expect(run.status == 0, "\(run.errors)")
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "2 apps shown in myapp1 (locale ko):")
        #expect(
            lines.contains {
                $0.contains("My App 2") && $0.contains("Finance") && $0.contains("재정을 관리하세요")
                    && $0.contains("987654321")
            })
        #expect(lines.contains { $0.contains("My App 4") && $0.contains("Games") && $0.contains("게임") })
        #expect(!run.output.contains("My App 1"), "the current app is excluded")
        #expect(lines.contains("2 problems:"))
        #expect(lines.contains("  apps[2].iconURL: must be an https URL"))
        #expect(lines.contains(#"  promoRules.myapp1[2]: unknown app id "myapp9""#))
    }

    @Test func theToolExitsOneWhenTheCatalogCannotBeLoadedAndTwoOnProblemsWithStrict() async throws {
        let directory = try TemporaryDirectory(prefix: "promo-cli")
        let missing = try await Self.touchpoint([
            "promo", "preview", "--catalog", directory.path + "/missing.json", "--app", "a",
        ])
        #expect(missing.status == 1)
        #expect(missing.errors.contains("error: cannot load the catalog \(directory.path)/missing.json: no such file"))
        #expect(missing.output.isEmpty)

        let bad = try Self.write(try Self.catalogWithProblems(), in: directory)
        let strict = try await Self.touchpoint(["promo", "preview", "--catalog", bad, "--app", "myapp1", "--strict"])
        #expect(strict.status == 2)
        #expect(strict.output.contains("apps[2].iconURL: must be an https URL"))
    }

    @Test func aURLIsFetchedAndJSONPrintedForScripts() async throws {
        let catalog = try Self.catalogWithProblems()
        let server = try TestHTTPServer { _ in .json(catalog) }
        let result = try await Self.preview([
            "--catalog", server.url("/v1/config/catalog").absoluteString, "--app", "myapp2", "--json",
        ])
        #expect(result.status == 0, "\(result.errors)")
        let report = try JSONParser.parse(result.output)
        #expect(report["app"] == "myapp2")
        #expect(report["locale"] == "en")
        #expect(report["apps"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["myapp1", "myapp4"])
        #expect(report["apps"]?[0]?["tagline"] == "Your productivity companion")
        #expect(report["apps"]?[0]?["appStoreID"] == "123456789")
        #expect(report["apps"]?[0]?["category"] == "Productivity")
        #expect(report["apps"]?[0]?["name"] == "My App 1")
        #expect(report["apps"]?[0]?["iconURL"] == "https://example.com/icon1.png")
        #expect(
            report["problems"] == [
                ["path": "apps[2].iconURL", "message": "must be an https URL"],
                ["path": "promoRules.myapp1[2]", "message": #"unknown app id "myapp9""#],
            ])
        #expect(server.requests.map(\.path) == ["/v1/config/catalog"])
    }

    @Test func theRotationAndMaximumMatchTheSDK() async throws {
        let directory = try TemporaryDirectory(prefix: "promo-cli")
        let json = PromoCatalogs.document(["a", "b", "c", "d", "e", "f"].map { PromoCatalogs.app($0, weight: 1) })
        let path = try Self.write(json, in: directory)
        for user in ["user-5", "user-6", "user-7"] {
            let result = try await Self.preview([
                "--catalog", path, "--app", "a", "--user", user, "--max", "2", "--json",
            ])
            let shown = try JSONParser.parse(result.output)["apps"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
            let expected = PromoSelection(currentAppID: "a", maximumApps: 2, rotationKey: user)
                .apps(from: try PromoCatalog(json: json)).map(\.id)
            #expect(shown == expected)
            #expect(shown?.count == 2)
        }
    }

    @Test func strictFailsOnProblemsOnly() async throws {
        let directory = try TemporaryDirectory(prefix: "promo-cli")
        let bad = try Self.write(try Self.catalogWithProblems(), in: directory)
        let strict = try await Self.preview(["--catalog", bad, "--app", "myapp1", "--strict"])
        #expect(strict.status == 2)
        let lenient = try await Self.preview(["--catalog", bad, "--app", "myapp1"])
        #expect(lenient.status == 0)

        let good = directory.path + "/good.json"
        try AtomicFile.write(Array(PromoCatalogs.seedQuickStart.utf8), to: good)
        let clean = try await Self.preview(["--catalog", good, "--app", "myapp1", "--strict"])
        #expect(clean.status == 0)
        #expect(clean.output.hasSuffix("\nno problems"))
    }

    @Test func anAppNotInTheCatalogIsNoted() async throws {
        let directory = try TemporaryDirectory(prefix: "promo-cli")
        let good = directory.path + "/good.json"
        try AtomicFile.write(Array(PromoCatalogs.seedQuickStart.utf8), to: good)
        let result = try await Self.preview(["--catalog", "file://" + good, "--app", "website"])
        #expect(result.output.hasPrefix("2 apps shown in website (locale en):"))
        #expect(result.output.contains("note: website is not among the catalog's valid apps"))
    }

    @Test func aCatalogThatCannotBeLoadedIsAnError() async throws {
        let directory = try TemporaryDirectory(prefix: "promo-cli")
        let server = try TestHTTPServer { request in
            request.path == "/broken" ? .text("<html>", status: 200) : .text("gone", status: 500)
        }
        let notAnObject = directory.path + "/list.json"
        try AtomicFile.write(Array(#"{"apps": 3}"#.utf8), to: notAnObject)
        let cases: [(String, String)] = [
            (directory.path + "/missing.json", "no such file"),
            (directory.path, "a directory"),
            (server.url("/apps.json").absoluteString, "the server answered 500"),
            (server.url("/broken").absoluteString, "invalid JSON at byte 0"),
            (notAnObject, "apps: expected an array, got number"),
            ("file://" + notAnObject, "apps: expected an array, got number"),
        ]
        for (catalog, reason) in cases {
            let result = try await Self.preview(["--catalog", catalog, "--app", "a"])
            #expect(result.status == 1, "\(catalog)")
            #expect(result.errors.hasPrefix("error: cannot load the catalog \(catalog): "), "\(result.errors)")
            #expect(result.errors.contains(reason), "\(catalog): \(result.errors)")
            #expect(result.output.isEmpty)
        }
    }

    @Test func badArgumentsAreRejected() {
        #expect(throws: (any Error).self) {
            try PromoCommand.Preview.parse(["--catalog", "x", "--app", "a", "--max=-1"])
        }
        #expect(throws: (any Error).self) { try PromoCommand.Preview.parse(["--catalog", "x"]) }
        #expect(throws: (any Error).self) { try PromoCommand.Preview.parse(["--app", "a"]) }
    }
}
