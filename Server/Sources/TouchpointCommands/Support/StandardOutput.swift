import Foundation

/// Unbuffered line output, for commands whose output a parent process reads as it happens
/// (`events tail`, the kill test's `debug record-loop`).
enum StandardOutput {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Writes `text` as it is.
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
