public import CountersignCore
public import CountersignCrypto
import Foundation

/// The TLS parts of a challenge, checked and parsed before anything is decided: the server's
/// chain of a server-trust challenge and the acceptable CA names of a client-certificate
/// challenge. Whatever is malformed is a 4xx here, so a bad chain is never recorded.
public struct PresentedTLS: Sendable {
    /// The presented chain, leaf first, when the challenge is server trust and carries one.
    public var chain: [Certificate]?
    /// SHA-256 over the presented chain (each certificate's length as 4 bytes big-endian, then
    /// its DER), lowercase hex: what the session remembers a trusted answer under.
    public var chainDigest: String?
    /// The server's acceptable CA names (DER) of a client-certificate challenge; empty: any CA.
    public var acceptableIssuers: [[UInt8]]
    /// SHA-256 over the acceptable CA names, as over a chain, taken as a set (each name once, in
    /// byte order); nil when there are none: what the session remembers an identity answer under.
    /// A server's list is a set, and the order it sends it in may change from one connection to
    /// the next: the same CAs must find the identity the session answered them with.
    public var acceptableIssuersDigest: String?

    /// Each item's length as 4 bytes big-endian, then the item; SHA-256, lowercase hex.
    static func digest(_ items: [[UInt8]]) -> String {
        var input: [UInt8] = []
        for item in items {
            let count = UInt32(item.count)
            input += [UInt8(count >> 24), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff)]
            input += item
        }
        return Digest.hash(.sha256, input).hexString
    }

    /// Checks and parses the TLS parts of `challenge`, wherever they are sent (a malformed part is
    /// refused even where the method does not use it); keeps those its method uses.
    ///
    /// - Throws: `malformed_certificate` (not base64, not one DER certificate, truncated,
    ///   trailing bytes), `chain_too_long` (more than 10), `certificate_too_large` (over
    ///   64 KiB), `invalid_distinguished_name`.
    public static func parse(_ challenge: Challenge) throws -> PresentedTLS {
        try parse(challenge.protectionSpace)
    }

    /// As `parse(_:)` for a challenge's space; a client's submission sends one too.
    public static func parse(_ space: ProtectionSpace) throws -> PresentedTLS {
        var presented = PresentedTLS(chain: nil, chainDigest: nil, acceptableIssuers: [])
        if let encoded = space.serverTrust?.certificates, !encoded.isEmpty {
            let (certificates, ders) = try chain(encoded)
            if space.method == .serverTrust {
                presented.chain = certificates
                presented.chainDigest = Self.digest(ders)
            }
        }
        if let encoded = space.distinguishedNames, !encoded.isEmpty {
            let names = try acceptableIssuers(encoded)
            if space.method == .clientCertificate {
                presented.acceptableIssuers = names
                presented.acceptableIssuersDigest = Self.digest(Set(names).sorted { $0.lexicographicallyPrecedes($1) })
            }
        }
        return presented
    }

    private static func chain(_ encoded: [String]) throws -> (certificates: [Certificate], ders: [[UInt8]]) {
        guard encoded.count <= Certificate.maximumChainLength else {
            throw CountersignError(
                .chainTooLong,
                "'protectionSpace.serverTrust.certificates' holds \(encoded.count) certificates, at most \(Certificate.maximumChainLength)"
            )
        }
        var certificates: [Certificate] = []
        var ders: [[UInt8]] = []
        for (index, text) in encoded.enumerated() {
            let field = "protectionSpace.serverTrust.certificates[\(index)]"
            // Base64 of the largest certificate accepted, and a little room for padding.
            guard text.utf8.count <= (Certificate.maximumByteCount + 2) / 3 * 4 else {
                throw CountersignError(.certificateTooLarge, "'\(field)' is larger than \(Certificate.maximumByteCount) bytes")
            }
            guard let der = Data(base64Encoded: text), !der.isEmpty else {
                throw CountersignError(.malformedCertificate, "'\(field)' is not base64")
            }
            do {
                certificates.append(try Certificate(derBytes: [UInt8](der)))
            } catch {
                throw CountersignError(error.code == .certificateTooLarge ? .certificateTooLarge : .malformedCertificate, "'\(field)': \(error.message)")
            }
            ders.append([UInt8](der))
        }
        return (certificates, ders)
    }

    private static func acceptableIssuers(_ encoded: [String]) throws -> [[UInt8]] {
        guard encoded.count <= AcceptableIssuers.maximumNameCount else {
            throw CountersignError(
                .invalidDistinguishedName,
                "'protectionSpace.distinguishedNames' holds more than \(AcceptableIssuers.maximumNameCount) names"
            )
        }
        return try encoded.enumerated().map { index, text in
            let field = "protectionSpace.distinguishedNames[\(index)]"
            guard text.utf8.count <= 16 * 1024, let der = Data(base64Encoded: text), AcceptableIssuers.isName([UInt8](der)) else {
                throw CountersignError(.invalidDistinguishedName, "'\(field)' is not base64 of a DER distinguished name")
            }
            return [UInt8](der)
        }
    }
}

