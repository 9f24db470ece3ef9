import ArgumentParser

/// `touchpoint`: the command-line tool.
@main
struct TouchpointCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
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
            LoadgenCommand.self,
            SendCommand.self,
            DemoCommand.self,
        ]
    )
}
