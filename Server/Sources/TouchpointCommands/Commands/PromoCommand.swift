import ArgumentParser
import Foundation
import Touchpoint

/// `touchpoint promo preview`: shows a cross-promotion catalog as one app's users see it.
struct PromoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "promo",
        abstract: "Inspect cross-promotion catalogs.",
        subcommands: [Preview.self])

    struct Preview: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the apps a user of one app would see, and every problem in the catalog.",
            discussion: """
                The list is what the SDK shows: the app itself excluded, its promoRules applied, \
                taglines in the locale (then its language, then English, then any), cut to the \
                maximum with the same per-user rotation. Problems are printed with their JSON path.
                Exit status: 0 when the catalog loaded (even with problems, unless --strict), \
                1 when it could not be loaded at all, 2 with --strict when it has problems.
                  touchpoint promo preview --catalog https://example.com/apps.json --app myapp1 --locale ko
                """)

        @Option(help: ArgumentHelp("The catalog: an http(s) URL or a file.", valueName: "url-or-file"))
        var catalog: String

        @Option(help: ArgumentHelp("The promoting app's id in the catalog.", valueName: "id"))
        var app: String

        @Option(help: "The user's locale, e.g. ko or pt-BR.")
        var locale = "en"

        @Option(help: "The user id the weighted rotation sticks to (as PromoConfig.userID).")
        var user = ""

        @Option(name: .customLong("max"), help: "The most apps to show (overrides the catalog's maxApps).")
        var maximumApps: Int?

        @Option(help: "Seconds to wait for the catalog's server.")
        var timeout: Double = 30

        @Flag(help: "Print one JSON object: the apps and the problems.")
        var json = false

        @Flag(help: "Exit with status 2 when the catalog has problems.")
        var strict = false

        func validate() throws {
            if let maximumApps, maximumApps < 0 { throw ValidationError("--max must be 0 or more") }
            guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a positive number") }
        }

        func run() async throws {
            let result = await preview()
            if !result.output.isEmpty { print(result.output) }
            if !result.errors.isEmpty {
                var standardError = FileHandle.standardError
                print(result.errors, to: &standardError)
            }
            if result.status != 0 { throw ExitCode(result.status) }
        }

        /// What the command prints and how it exits.
        struct Result {
            var output = ""
            var errors = ""
            var status: Int32 = 0
        }

        /// Loads, checks and lists the catalog: the whole command but the printing.
        func preview() async -> Result {
            let loaded: PromoCatalog
            do {
                loaded = try PromoCatalog(bytes: try await loadBytes())
            } catch {
                return Result(errors: "error: cannot load the catalog \(catalog): \(error)", status: 1)
            }
            let selection = PromoSelection(currentAppID: app, maximumApps: maximumApps, rotationKey: user)
            let apps = selection.apps(from: loaded)
            let output = json ? jsonReport(apps: apps, catalog: loaded) : textReport(apps: apps, catalog: loaded)
            return Result(output: output, status: strict && !loaded.problems.isEmpty ? 2 : 0)
        }

        /// The catalog's bytes, from the network (one request, no cache) or a file.
        private func loadBytes() async throws -> [UInt8] {
            let url = URL(string: catalog)
            let scheme = url?.scheme?.lowercased()
            if let url, scheme == "http" || scheme == "https" {
                let resource = RemoteResource<[UInt8]>(
                    url: url,
                    cacheDirectory: nil,
                    configuration: RemoteResourceConfiguration(requestTimeout: timeout),
                    decode: { $0 })
                let snapshot = await resource.forceRefresh()
                guard let bytes = snapshot.value else {
                    throw PreviewError(message: snapshot.lastError.map { "\($0)" } ?? "no response")
                }
                return bytes
            }
            let path = scheme == "file" ? url!.path : catalog
            guard let bytes = try AtomicFile.read(path) else { throw PreviewError(message: "no such file") }
            return bytes
        }

        private func textReport(apps: [PromoApp], catalog: PromoCatalog) -> String {
            var lines: [String] = []
            let userPart = user.isEmpty ? "" : ", user \(user)"
            lines.append(
                "\(apps.count) app\(apps.count == 1 ? "" : "s") shown in \(app) (locale \(locale)\(userPart)):")
            if !apps.isEmpty {
                var table = TextTable("NAME", "CATEGORY", "TAGLINE", "APP STORE ID")
                for promoted in apps {
                    table.add(promoted.name, promoted.category, promoted.tagline(for: locale), promoted.appStoreID)
                }
                lines.append(table.rendered)
            }
            if catalog.app(withID: app) == nil {
                lines.append("note: \(app) is not among the catalog's valid apps; its promoRules entry still applies")
            }
            let problems = catalog.problems
            lines.append("")
            lines.append(
                problems.isEmpty ? "no problems" : "\(problems.count) problem\(problems.count == 1 ? "" : "s"):")
            lines += problems.map { "  \($0)" }
            return lines.joined(separator: "\n")
        }

        private func jsonReport(apps: [PromoApp], catalog: PromoCatalog) -> String {
            let listed: [JSONValue] = apps.map { promoted in
                [
                    "id": .string(promoted.id),
                    "name": .string(promoted.name),
                    "category": .string(promoted.category),
                    "tagline": .string(promoted.tagline(for: locale)),
                    "appStoreID": .string(promoted.appStoreID),
                    "iconURL": .string(promoted.iconURL.absoluteString),
                ]
            }
            let problems: [JSONValue] = catalog.problems.map { problem in
                ["path": .string(problem.path.description), "message": .string(problem.message)]
            }
            let report: JSONValue = [
                "app": .string(app),
                "locale": .string(locale),
                "user": .string(user),
                "apps": .array(listed),
                "problems": .array(problems),
            ]
            return report.jsonString(sortedKeys: true)
        }
    }

    struct PreviewError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}
