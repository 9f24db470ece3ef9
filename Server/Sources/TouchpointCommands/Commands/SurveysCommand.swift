import ArgumentParser

/// `touchpoint surveys validate|simulate`: check a survey config and try it on recorded events.
struct SurveysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "surveys",
        abstract: "Check a survey config, and replay recorded events through it.",
        subcommands: [SurveysValidateCommand.self, SurveysSimulateCommand.self])
}
