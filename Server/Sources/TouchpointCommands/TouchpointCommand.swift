import ArgumentParser

/// `touchpoint`: the command-line tool, as a library so its commands are tested in process.
///
/// The `touchpoint` executable only calls ``main()``.
public struct TouchpointCommand: AsyncParsableCommand {
    /// The tool's name, summary and subcommands.
    public static let configuration = CommandConfiguration(
        commandName: "touchpoint",
        abstract: "Touchpoint: record, inspect and deliver customer-experience events.",
        subcommands: [
            RecordCommand.self,
            SessionsCommand.self,
            EventsCommand.self,
            DebugCommand.self,
            PromoCommand.self,
            StoreCommand.self,
            SurveysCommand.self,
            ServeCommand.self,
            BackupCommand.self,
            UsersCommand.self,
            RestoreCommand.self,
            LoadgenCommand.self,
            SendCommand.self,
            DemoCommand.self,
        ]
    )

    /// Creates the root command (argument parsing does this).
    public init() {}
}
