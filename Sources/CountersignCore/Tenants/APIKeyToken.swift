/// The text form of a tenant API key: `csk_<lookup id>_<secret>`.
///
/// The lookup id is public and indexes the key's row, so authenticating costs one indexed
/// read and the secret part is then compared against its stored hash in constant time:
/// a key is never looked up by its secret.
public struct APIKeyToken: Sendable, Hashable {
    public static let scheme = "csk"
    /// Lookup ids are this many characters of the alphabet below.
    public static let lookupIDLength = 12
    @usableFromInline
    static let lookupAlphabet = Array("abcdefghijkmnpqrstuvwxyz23456789".utf8)

    public let lookupID: String
    public let secret: String

    public init(lookupID: String, secret: String) {
        self.lookupID = lookupID
        self.secret = secret
    }

    /// Builds a token from random bytes: `lookupBytes` pick the lookup id, `secret` is the
    /// already encoded secret part (at least 32 random bytes, base64url).
    public init(lookupBytes: [UInt8], secret: String) {
        precondition(lookupBytes.count >= Self.lookupIDLength)
        let alphabet = Self.lookupAlphabet
        // 32 symbols: each byte's low five bits pick one, so every symbol is equally likely.
        let id = lookupBytes.prefix(Self.lookupIDLength).map { alphabet[Int($0 & 0x1f)] }
        self.init(lookupID: String(decoding: id, as: UTF8.self), secret: secret)
    }

    /// Parses a presented bearer token; `nil` when it cannot be a Countersign key at all.
    @inlinable
    public init?(parsing text: some StringProtocol) {
        // csk_<lookup id>_<secret>; the secret is base64url, so it may hold more underscores.
        let utf8 = text.utf8
        guard let first = utf8.firstIndex(of: UInt8(ascii: "_")),
            let second = utf8[utf8.index(after: first)...].firstIndex(of: UInt8(ascii: "_"))
        else { return nil }
        let lookup = utf8[utf8.index(after: first)..<second]
        let secret = utf8[utf8.index(after: second)...]
        guard utf8[..<first].elementsEqual(Self.scheme.utf8),
            lookup.count == Self.lookupIDLength, lookup.allSatisfy(Self.lookupAlphabet.contains),
            (32...256).contains(secret.count)
        else { return nil }
        self.init(lookupID: String(decoding: lookup, as: UTF8.self), secret: String(decoding: secret, as: UTF8.self))
    }

    /// The public, listable part: `csk_<lookup id>`.
    public var prefix: String { "\(Self.scheme)_\(lookupID)" }

    /// The whole key as handed out once.
    public var text: String { "\(prefix)_\(secret)" }
}

// A token carries a secret: printing one, on purpose or through string interpolation in a log
// line, shows only its public prefix. So does its mirror, which `dump` and debuggers walk child by
// child, past the description, as they walk any value that holds a token.
extension APIKeyToken: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "\(prefix)_…" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["prefix": prefix, "secret": "redacted"], displayStyle: .struct) }
}
