import Foundation

/// The JSON Schema (draft-07) of the survey config, shipped with the package as
/// `survey.schema.json`: every field, its type, default and description, for editors
/// (`"$schema": "./survey.schema.json"`) and validators such as `ajv` or Python's `jsonschema`.
///
/// The same file is `survey.schema.json` at the repository root (a link to this resource, so
/// there is one copy), and `touchpoint surveys schema` prints it.
///
/// The schema checks shapes; ``SurveyConfigValidator`` also checks what a schema cannot say:
/// that survey ids are unique, and that `maxLength` is not below `minLength`.
public enum SurveySchema {
    /// The schema file inside the package's resource bundle.
    public static var url: URL? { Bundle.module.url(forResource: "survey.schema", withExtension: "json") }

    /// The schema's bytes.
    /// - Throws: when the resource cannot be read.
    public static func data() throws -> Data {
        guard let url else { throw CocoaError(.fileNoSuchFile) }
        return try Data(contentsOf: url)
    }
}
