/// A Countersign `client` API key (`csk_<lookup id>_<secret>`), sent as the bearer token.
///
/// The key never shows: its description, debug description and mirror give only the public
/// prefix (`csk_<lookup id>`), which the admin API also lists, so a key in a log line can still be
/// recognised without being usable.
public struct ClientKey: Sendable, Hashable {
    /// The whole key. Use it only to authenticate.
    public let secret: String

    public init(_ secret: String) {
        self.secret = secret
    }

    /// The public part of the key (`csk_` and its lookup id), or `nil` when the key is not in
    /// Countersign's format.
    public var prefix: String? {
        let parts = secret.split(separator: "_", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "csk", !parts[1].isEmpty else { return nil }
        return "csk_\(parts[1])"
    }
}

extension ClientKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "ClientKey(\(prefix ?? "?")_…redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["prefix": prefix as Any, "secret": "redacted"], displayStyle: .struct) }
}
