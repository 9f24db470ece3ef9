import ArgumentParser

/// `touchpoint`: the command-line tool.
struct TouchpointCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "touchpoint",
        abstract: "Touchpoint: record, inspect and deliver customer-experience events.",
        subcommands: [ServeCommand.self, LoadgenCommand.self]
    )
}
