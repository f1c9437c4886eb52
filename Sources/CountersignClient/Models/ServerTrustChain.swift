public import Foundation

/// A server's certificate chain as the client received it in a server-trust challenge.
public struct ServerTrustChain: Codable, Hashable, Sendable {
    /// DER certificates, leaf first (base64 on the wire).
    public var certificates: [Data]

    public init(certificates: [Data]) {
        self.certificates = certificates
    }
}
