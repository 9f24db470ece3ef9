import ArgumentParser
import Foundation
import Touchpoint

/// `touchpoint store …`: look at scenario-store data.
struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Look at scenario-store data.",
        subcommands: [StoreInspectCommand.self]
    )
}

/// `touchpoint store inspect FILE [--json]`: a file-scoped store's values by key path.
struct StoreInspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print the values of a file-scoped store by key path.",
        discussion: """
            FILE is a store document written by a `file(url:)` scope. Each leaf value is printed as \
            `key.path = JSON`; colors and URLs use their tagged form ({"$color":"#FF0000"}). \
            A file that is not a store document is reported with what is wrong and where, and the \
            command exits with status 1.
            """
    )

    @Argument(help: "The store file.")
    var file: String

    @Flag(name: .long, help: "Print one JSON object from key path to value instead of lines.")
    var json = false

    func run() throws {
        do {
            print(try Self.render(file: file, json: json), terminator: "")
        } catch {
            FileHandle.standardError.write(Data("touchpoint store inspect: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    /// The command's output for a file.
    /// - Throws: ``StoreError`` when the file is missing, unreadable or not a store document.
    static func render(file: String, json: Bool) throws(StoreError) -> String {
        let url = URL(fileURLWithPath: file)
        guard let document = try StoreDocument.read(from: url) else {
            throw StoreError(.fileFailure, keyPath: url.path, "no such file")
        }
        let leaves = StoreValue.object(document.values).flattened()
        if json {
            var members: [String: JSONValue] = [:]
            for leaf in leaves { members[leaf.keyPath] = leaf.value.jsonValue }
            return JSONValue.object(members).jsonString(sortedKeys: true) + "\n"
        }
        var text = "\(url.path): app \(document.appID), data version \(document.version), "
        text += "\(leaves.count) value\(leaves.count == 1 ? "" : "s")\n"
        for leaf in leaves { text += "\(leaf.keyPath) = \(leaf.value.jsonString(sortedKeys: true))\n" }
        return text
    }
}
