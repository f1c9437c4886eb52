import CountersignCore
import CountersignCrypto
import Foundation
import Synchronization

// Not beside CountersignClient in one file: both modules name a Challenge, a ProtectionSpace...

/// The server side of HTTP Digest (RFC 7616) for a test upstream: issues challenges with fresh
/// nonces and checks `Authorization` values as a server holding the password does, with the
/// core's parser and responder (OpenSSL's hashes), independently of the service that computed them.
final class DigestVerifier: Sendable {
    let user: String
    let password: String
    let realm: String
    static let opaque = "5ccc069c403ebaf9f0171e9517f40e41"
    /// Offered in this order; the service should pick SHA-256.
    static let algorithms = ["MD5", "SHA-256"]

    /// Every nonce issued, with the highest `nc` accepted for it.
    private let nonces = Mutex<[String: UInt32]>([:])

    init(user: String, password: String, realm: String) {
        self.user = user
        self.password = password
        self.realm = realm
    }

    /// The `WWW-Authenticate` values of a new 401: one challenge per algorithm, one fresh nonce.
    func challenges() -> [String] {
        let nonce = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        nonces.withLock { $0[nonce] = 0 }
        return Self.algorithms.map { Self.challenge(realm: realm, nonce: nonce, algorithm: $0) }
    }

    static func challenge(realm: String, nonce: String, algorithm: String) -> String {
        #"Digest realm="\#(realm)", qop="auth", algorithm=\#(algorithm), nonce="\#(nonce)", opaque="\#(opaque)""#
    }

    /// Why `authorization` does not authenticate `method` of `uri`, or nil when it does.
    func rejection(of authorization: String, method: String, uri: String) -> String? {
        // An Authorization value has the grammar of a challenge: a scheme, then auth-params.
        guard let header = try? AuthenticationChallengeParser().parse(authorization).first, header.scheme == .digest else {
            return "not a Digest header"
        }
        guard let nonce = header.parameter("nonce"), let algorithm = header.parameter("algorithm"),
            let ncText = header.parameter("nc"), let nc = UInt32(ncText, radix: 16), let cnonce = header.parameter("cnonce"),
            let response = header.parameter("response")
        else { return "a parameter is missing" }
        guard header.parameter("username") == user, header.parameter("realm") == realm, header.parameter("uri") == uri,
            header.parameter("qop") == "auth", header.parameter("opaque") == Self.opaque
        else { return "username, realm, uri, qop or opaque differ" }
        guard Self.algorithms.contains(algorithm) else { return "an algorithm that was not offered" }
        // Each nonce count once, increasing: a replayed header is refused.
        let fresh = nonces.withLock { nonces -> Bool in
            guard let last = nonces[nonce], nc > last else { return false }
            nonces[nonce] = nc
            return true
        }
        guard fresh else { return "unknown nonce or a repeated nonce count" }
        do {
            let issued = try AuthenticationChallengeParser().parse(Self.challenge(realm: realm, nonce: nonce, algorithm: algorithm))
            let challenge = try DigestChallenge(issued[0])
            let expected = try DigestResponder(hash: Self.hash).authorization(
                for: challenge, user: user, password: password, method: method, requestURI: uri, cnonce: cnonce, nonceCount: nc
            )
            return expected.response == response ? nil : "wrong response hash"
        } catch {
            return "the issued challenge does not validate: \(error)"
        }
    }

    private static let hash: DigestResponder.HashFunction = { algorithm, bytes in
        switch algorithm {
        case .md5: Digest.hash(.md5, bytes)
        case .sha256: Digest.hash(.sha256, bytes)
        case .sha512_256: Digest.hash(.sha512_256, bytes)
        }
    }
}
