import ArgumentParser
import Foundation
import Touchpoint

/// `touchpoint surveys schema`: prints the survey config's JSON Schema.
struct SurveysSchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the survey config's JSON Schema (draft-07), the file survey.schema.json.",
        discussion: """
            The same schema is survey.schema.json at the root of the repository. Save it beside a \
            config whose "$schema" is "./survey.schema.json" for editor completion, or validate with \
            `npx ajv-cli validate -s survey.schema.json -d survey.json`.
            """)

    func run() throws {
        let data: Data
        do {
            data = try SurveySchema.data()
        } catch {
            throw ValidationError("the survey schema is missing from the installation: \(error.localizedDescription)")
        }
        FileHandle.standardOutput.write(data)
    }
}
