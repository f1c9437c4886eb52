import CountersignCore
import CountersignCrypto

// Shared fixtures of the Challenge*/Digest*/Basic* tests.

/// The Digest hash function the service injects: OpenSSL's, through CountersignCrypto.
let openSSLDigestHash: DigestResponder.HashFunction = { algorithm, bytes in
    switch algorithm {
    case .md5: Digest.hash(.md5, bytes)
    case .sha256: Digest.hash(.sha256, bytes)
    case .sha512_256: Digest.hash(.sha512_256, bytes)
    }
}

/// A challenge with parameters given in order; the names and values are known to be valid.
func authChallenge(_ scheme: String, _ parameters: KeyValuePairs<String, String> = [:]) -> AuthenticationChallenge {
    do {
        var built: [AuthenticationParameter] = []
        for (name, value) in parameters {
            built.append(try AuthenticationParameter(name: name, value: value))
        }
        return try AuthenticationChallenge(scheme: scheme, parameters: built)
    } catch {
        fatalError("invalid test fixture: \(error)")
    }
}

/// A token68 challenge; the token68 is known to be valid.
func authChallenge(_ scheme: String, token68: String) -> AuthenticationChallenge {
    do {
        return try AuthenticationChallenge(scheme: scheme, token68: token68)
    } catch {
        fatalError("invalid test fixture: \(error)")
    }
}

/// SplitMix64: a tiny, fast, seedable generator, so every property test run sees the same cases
/// and a failure names a seed that reproduces it.
struct ChallengeSeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Real-world and RFC field values, the seeds that the mutation tests (and the fuzz corpus) start from.
let sampleChallengeFields: [String] = [
    #"Basic realm="simple""#,
    #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#,
    #"Digest realm="private", nonce="/JKeRm3OBQA=ed8ee1d27e7e7ab50b2e0a7a48a75fc26a2f6d4b", algorithm=MD5, qop="auth""#,
    #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
    #"Digest realm="api@example.org", qop="auth", algorithm=SHA-512-256, nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS", charset=UTF-8, userhash=true"#,
    "Negotiate",
    "NTLM",
    "Negotiate YIIGhgYGKwYBBQUCoIIGejCCBnagMDAuBgkqhkiC9xIBAgIGCSqGSIb3EgECAgYKKwYBBAGCNwICHgYKKwYBBAGCNwICCg==",
    #"Bearer realm="example", error="invalid_token", error_description="The access token expired""#,
    "Bearer abc.def==",
    #", Basic realm="a" ,, , Digest realm="b", nonce="n","#,
    #"Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41""#,
    #"Basic realm="Zürich \\ \"HQ\"", charset="UTF-8""#,
    "Digest realm=\"x\",\tnonce = \"y\" ,stale=TRUE, algorithm=MD5-sess, qop=auth",
]
