import ArgumentParser

/// The `instant` command line: runs the server and works with documents and Instant JSON files.
@main
struct InstantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "instant",
        abstract: "OpenInstant: self-hosted real-time collaboration on PDF annotations.",
        subcommands: [
            ServeCommand.self, TokenCommand.self, UploadCommand.self, ExportCommand.self, ImportCommand.self,
            ValidateCommand.self, InspectCommand.self, SyncCommand.self,
        ]
    )
}
