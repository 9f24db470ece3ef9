import ArgumentParser

TouchpointCommand.main()
