import ArgumentParser
import Dispatch
import Foundation

// Subcommands such as `serve` are async; run the command tree in a task and keep the main
// thread serving the dispatch main queue (top-level `await` is not available in this target,
// which tests also link).
Task {
    await TouchpointCommand.main(nil)
    exit(0)
}
dispatchMain()
