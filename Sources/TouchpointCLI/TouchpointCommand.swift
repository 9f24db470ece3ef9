import ArgumentParser

/// `touchpoint`: the command-line tool.
struct TouchpointCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "touchpoint",
        abstract: "Touchpoint: record, inspect and deliver customer-experience events.",
        subcommands: [StoreCommand.self]
    )
}
