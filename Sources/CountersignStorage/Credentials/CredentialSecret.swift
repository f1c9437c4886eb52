import CountersignCore
import CountersignCrypto
import Foundation

/// What is sealed for a credential: the password today; kept as a small JSON object so that
/// other kinds of secret can join it without a new column.
struct CredentialSecret: Codable, Equatable {
    var password: String

    func sealed(with key: TenantSecretKey, rowID: UUID, exportable: Bool) throws -> [UInt8] {
        var encoded = try JSONEncoder().encode(self)
        var plaintext = Array(encoded)
        defer {
            encoded.resetBytes(in: encoded.startIndex..<encoded.endIndex)
            plaintext.wipe()
        }
        return try key.seal(plaintext, rowID: rowID, exportable: exportable)
    }

    static func opened(_ sealed: [UInt8], with key: TenantSecretKey, rowID: UUID, exportable: Bool) throws -> CredentialSecret {
        var plaintext = try key.open(sealed, rowID: rowID, exportable: exportable)
        defer { plaintext.wipe() }
        // Decoded in place: a `Data` copy of the plaintext would outlive the wipe.
        return try plaintext.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress else { return try JSONDecoder().decode(CredentialSecret.self, from: Data()) }
            return try JSONDecoder().decode(CredentialSecret.self, from: Data(bytesNoCopy: base, count: bytes.count, deallocator: .none))
        }
    }
}

// The types that carry a password in the clear say so when printed, dumped or interpolated into
// a log line, and show no more.
extension CredentialSecret: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String { "CredentialSecret(password: redacted)" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: ["password": "redacted"], displayStyle: .struct) }
}

extension CredentialStore.Input: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "CredentialStore.Input(\(attributes.host), account: \(attributes.account), password: redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["attributes": attributes, "password": "redacted"], displayStyle: .struct) }
}

extension CredentialStore.Changes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "CredentialStore.Changes(password: \(password == nil ? "unchanged" : "redacted"))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["password": password == nil ? "unchanged" : "redacted"], displayStyle: .struct) }
}
