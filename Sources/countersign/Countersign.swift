import ArgumentParser

@main
struct Countersign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "countersign",
        abstract: "Answers authentication challenges for fleets of HTTP clients.",
        discussion: """
            Start with `countersign dev`: it runs a local PostgreSQL, creates a demo tenant and
            serves on 127.0.0.1:8080. In production, run `countersign serve` against your database.
            """,
        subcommands: [ServeCommand.self, MigrateCommand.self, DevCommand.self],
        defaultSubcommand: nil
    )
}
