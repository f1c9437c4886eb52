import ArgumentParser
import CountersignHTTP

@main
struct Countersign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "countersign",
        abstract: "Answers authentication challenges for fleets of HTTP clients.",
        discussion: """
            Start with `countersign dev`: it runs a local PostgreSQL, creates a demo tenant and \
            serves on 127.0.0.1:8080. In production, run `countersign serve` against your database. \
            `countersign fetch URL` fetches a protected URL as a fleet app would, through the \
            Countersign URLSession delegate.
            """,
        version: Release.version,
        subcommands: [ServeCommand.self, MigrateCommand.self, DevCommand.self, FetchCommand.self, RekeyCommand.self],
        defaultSubcommand: nil
    )
}
