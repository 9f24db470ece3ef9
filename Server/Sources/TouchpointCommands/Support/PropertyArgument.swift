import ArgumentParser
import Touchpoint

/// A `key=value` property on the command line. The value is read as JSON when it is JSON
/// (`count=3`, `ok=true`, `tags=["a","b"]`, `name="quoted"`), otherwise as a plain string.
struct PropertyArgument: ExpressibleByArgument {
    let key: String
    let value: JSONValue

    init?(argument: String) {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else { return nil }
        key = String(argument[..<equals])
        let text = String(argument[argument.index(after: equals)...])
        value = (try? JSONParser.parse(text)) ?? .string(text)
    }

    static var defaultValueDescription: String { "key=value" }
}
