import Foundation

/// Reads the `COUNTERSIGN_*` environment variables that back the command-line options.
///
/// A value that does not parse stops the program with a usage error: an operator who wrote
/// `COUNTERSIGN_PORT=80x` must not get the default port without a word. Except when help is
/// asked for, which must work whatever the environment holds: there the value is passed over
/// (help shows the built-in default), and refused once a command runs.
enum Environment {
    static func string(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }

    static func int(_ name: String) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else { return refuse(name, "an integer") }
        return value
    }

    static func double(_ name: String) -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else { return refuse(name, "a number") }
        return value
    }

    static func bool(_ name: String) -> Bool? {
        guard let text = string(name) else { return nil }
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: return refuse(name, "true or false (also 1/0, yes/no, on/off)")
        }
    }

    /// Option defaults are read while the arguments are parsed, where nothing can be thrown.
    private static func refuse<Value>(_ name: String, _ expected: String) -> Value? {
        guard !helpRequested else { return nil }
        FileHandle.standardError.write(Data("countersign: \(name) must be \(expected)\n".utf8))
        exit(64)  // EX_USAGE, as ArgumentParser's own validation errors
    }

    /// As ArgumentParser reads a command line: `help` as the first argument, or the flag before
    /// any `--` (an option's value that happens to be `help` asks for nothing).
    private static let helpRequested: Bool = {
        let arguments = CommandLine.arguments.dropFirst()
        return arguments.first == "help" || arguments.prefix { $0 != "--" }.contains { $0 == "-h" || $0 == "--help" }
    }()
}
