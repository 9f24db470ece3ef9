import ArgumentParser
import TouchpointCommands

/// The `touchpoint` executable: everything it does lives in `TouchpointCommands`.
@main
enum TouchpointMain {
    static func main() async {
        await TouchpointCommand.main()
    }
}
