import ArgumentParser

/// `touchpoint surveys validate|simulate|schema`: check a survey config, try it on recorded events,
/// print its JSON Schema.
struct SurveysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "surveys",
        abstract: "Check a survey config, replay recorded events through it, print its schema.",
        subcommands: [SurveysValidateCommand.self, SurveysSimulateCommand.self, SurveysSchemaCommand.self])
}
