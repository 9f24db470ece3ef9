import ArgumentParser
import Foundation
import Touchpoint

/// `--dir`: the local log's base directory, shared by the commands that read or write it.
struct LogDirectoryOption: ParsableArguments {
    @Option(
        name: .customLong("dir"),
        help: ArgumentHelp(
            "The local log's base directory (default: $TOUCHPOINT_DIR, else the platform's directory).",
            valueName: "directory"))
    var path: String?

    var url: URL {
        if let path { return URL(fileURLWithPath: path, isDirectory: true) }
        if let environment = ProcessInfo.processInfo.environment["TOUCHPOINT_DIR"], !environment.isEmpty {
            return URL(fileURLWithPath: environment, isDirectory: true)
        }
        return EventRecorder.defaultDirectory
    }
}
