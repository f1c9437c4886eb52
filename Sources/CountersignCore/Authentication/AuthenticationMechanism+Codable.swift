/// Mechanisms are written in policies by their description: `Digest SHA-512-256`, `Digest SHA-256`,
/// `Digest MD5`, `NTLM`, `Basic`, exactly as the contract's enum spells them.
extension AuthenticationMechanism: Codable {
    /// The mechanisms Countersign answers from a raw response: it computes Basic and Digest
    /// headers and releases NTLM credentials. Negotiate and Bearer are never answered, so a
    /// preference list may not name them.
    public static let answerable: [Self] = [.digest(.sha512_256), .digest(.sha256), .digest(.md5), .ntlm, .basic]

    /// The mechanism spelled `name` (as ``description`` writes it), or `nil`.
    public init?(name: String) {
        let all: [Self] = Self.answerable + [.negotiate, .bearer]
        guard let found = all.first(where: { $0.description == name }) else {
            return nil
        }
        self = found
    }

    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let mechanism = Self(name: name), Self.answerable.contains(mechanism) else {
            throw CountersignError(
                .invalidEnumValue,
                "\(FieldPath(decoder.codingPath)) must be one of \(Self.answerable.map(\.description).joined(separator: ", "))"
            )
        }
        self = mechanism
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
