import Foundation

/// What is sealed for a credential: the password today; kept as a small JSON object so that
/// other kinds of secret can join it without a new column.
struct CredentialSecret: Codable, Equatable {
    var password: String

    func sealed(with key: TenantSecretKey, rowID: UUID) throws -> [UInt8] {
        try key.seal(Array(try JSONEncoder().encode(self)), rowID: rowID)
    }

    static func opened(_ sealed: [UInt8], with key: TenantSecretKey, rowID: UUID) throws -> CredentialSecret {
        try JSONDecoder().decode(CredentialSecret.self, from: Data(try key.open(sealed, rowID: rowID)))
    }
}
