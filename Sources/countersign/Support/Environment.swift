import Foundation

/// Reads the `COUNTERSIGN_*` environment variables that back the command-line options.
enum Environment {
    static func string(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }

    static func int(_ name: String) -> Int? {
        string(name).flatMap { Int($0) }
    }

    static func bool(_ name: String) -> Bool? {
        switch string(name)?.lowercased() {
        case "1", "true", "yes", "on": true
        case "0", "false", "no", "off": false
        default: nil
        }
    }
}
