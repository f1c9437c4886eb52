/// Computes Digest answers (RFC 7616 §3.4, with RFC 2069 compatibility), so that a password never
/// has to leave the service.
///
/// The responder is pure: hashing is injected (the core has no cryptography; the service passes
/// OpenSSL's), and so are the cnonce and the nonce count, which the service draws from its random
/// source and its central per-nonce counter. Given the same inputs it always gives the same answer.
///
/// Choices it makes:
/// - **qop**: `auth` whenever the server offers it, `auth-int` only when it is the sole offer.
///   `auth-int` protects the body too, but needs the body (or its hash) forwarded with every
///   challenge, and many servers implement it poorly; a server that insists can have it.
///   No qop at all means RFC 2069 mode: no cnonce, no nc.
/// - **user name**: with `userhash=true`, `H(user ":" realm)` in hexadecimal (RFC 7616 §3.4.4);
///   otherwise the name as a quoted-string when it is ASCII, and `username*` in RFC 8187 notation
///   (`UTF-8''J%C3%A4s...`) when it is not, as RFC 7616 §3.4.4 prescribes. Names and passwords
///   are hashed as UTF-8 bytes, normalized to NFC when the challenge says `charset=UTF-8` (RFC
///   7616 §4) and exactly as stored otherwise, because such a server compares against whatever
///   bytes it was provisioned with.
/// - **algorithm**: echoed with the server's spelling, and only if the server sent one.
public struct DigestResponder: Sendable {
    /// Hashes bytes with the given algorithm and returns the raw digest.
    public typealias HashFunction = @Sendable (DigestHashAlgorithm, [UInt8]) -> [UInt8]

    private let hashFunction: HashFunction

    /// A responder that hashes with `hash`.
    public init(hash: @escaping HashFunction) {
        self.hashFunction = hash
    }

    /// The answer to `challenge` for one request.
    ///
    /// - Parameters:
    ///   - challenge: the validated challenge being answered.
    ///   - user: the user name; must be non-empty and free of control characters.
    ///   - password: the password; any text.
    ///   - method: the request method, such as `GET`.
    ///   - requestURI: the request-target exactly as sent in the request line (usually the
    ///     path and query, such as `/dir/index.html`).
    ///   - entityBody: the request body or its hash; needed only when `auth-int` is the sole qop.
    ///   - cnonce: the client nonce: printable ASCII without `"` or `\`, such as random bytes in
    ///     base64 or hex. Ignored in RFC 2069 mode.
    ///   - nonceCount: how many requests, this one included, have used this nonce (1 for the
    ///     first). Ignored in RFC 2069 mode.
    /// - Throws: `invalid_digest_user`, `invalid_digest_request`, or
    ///   `digest_entity_body_required`.
    public func authorization(
        for challenge: DigestChallenge,
        user: String,
        password: String,
        method: String,
        requestURI: String,
        entityBody: DigestEntityBody? = nil,
        cnonce: String,
        nonceCount: UInt32
    ) throws(CountersignError) -> DigestAuthorization {
        let user = CredentialText.forServer(user, charsetUTF8: challenge.isCharsetUTF8)
        let password = CredentialText.forServer(password, charsetUTF8: challenge.isCharsetUTF8)
        guard !user.isEmpty, !user.utf8.contains(where: AuthenticationSyntax.isControl) else {
            throw CountersignError(.invalidDigestUser, "a Digest user name must be non-empty and free of control characters")
        }
        guard AuthenticationSyntax.isToken(method) else {
            throw CountersignError(.invalidDigestRequest, "the request method must be a token")
        }
        // A request-target never holds spaces or controls (RFC 9112 §3.2); refusing them here also
        // keeps the quoted `uri` parameter free of anything a header cannot carry.
        guard !requestURI.isEmpty, requestURI.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
            throw CountersignError(.invalidDigestRequest, "the request-target must be non-empty, without spaces or control characters")
        }

        let qop = Self.selectQop(from: challenge.qopOptions)
        if qop != nil {
            guard !cnonce.isEmpty,
                cnonce.utf8.allSatisfy({
                    (0x21...0x7E).contains($0) && $0 != AuthenticationSyntax.doubleQuote && $0 != AuthenticationSyntax.backslash
                })
            else {
                throw CountersignError(.invalidDigestRequest, "the cnonce must be printable ASCII without quotes or backslashes")
            }
            guard nonceCount > 0 else {
                throw CountersignError(.invalidDigestRequest, "the nonce count starts at 1")
            }
        }

        let algorithm = challenge.algorithm
        let colon = UInt8(ascii: ":")
        func hex(_ parts: [String]) -> String {
            var input = [UInt8]()
            for (index, part) in parts.enumerated() {
                if index > 0 { input.append(colon) }
                input.append(contentsOf: part.utf8)
            }
            return AuthenticationSyntax.lowercaseHex(hashFunction(algorithm.hashAlgorithm, input))
        }

        // RFC 7616 §3.4.2: A1 = user:realm:password, and for -sess H(that):nonce:cnonce.
        var ha1 = hex([user, challenge.realm, password])
        if algorithm.isSession {
            ha1 = hex([ha1, challenge.nonce, cnonce])
        }

        // RFC 7616 §3.4.3: A2 = method:uri, and for auth-int method:uri:H(entity-body).
        let ha2: String
        if qop == .authInt {
            ha2 = hex([method, requestURI, try bodyHash(entityBody, algorithm: algorithm.hashAlgorithm)])
        } else {
            ha2 = hex([method, requestURI])
        }

        let nc = Self.nonceCountString(nonceCount)
        let response: String
        if let qop {
            response = hex([ha1, challenge.nonce, nc, cnonce, qop.rawValue, ha2])
        } else {
            // RFC 2069 (kept by RFC 2617 §3.2.2.1 for servers that send no qop).
            response = hex([ha1, challenge.nonce, ha2])
        }

        var fields: [String] = []
        if challenge.userhash {
            fields.append("username=\"\(hex([user, challenge.realm]))\"")
        } else if user.utf8.allSatisfy({ $0 < 0x80 }) {
            fields.append("username=\(AuthenticationSyntax.quoted(user))")
        } else {
            fields.append("username*=\(Self.extendedValue(user))")
        }
        fields.append("realm=\(AuthenticationSyntax.quoted(challenge.realm))")
        fields.append("uri=\(AuthenticationSyntax.quoted(requestURI))")
        if let algorithmName = challenge.algorithmName {
            fields.append("algorithm=\(algorithmName)")
        }
        fields.append("nonce=\(AuthenticationSyntax.quoted(challenge.nonce))")
        if let qop {
            fields.append("nc=\(nc)")
            fields.append("cnonce=\(AuthenticationSyntax.quoted(cnonce))")
            fields.append("qop=\(qop.rawValue)")
        }
        fields.append("response=\"\(response)\"")
        if let opaque = challenge.opaque {
            fields.append("opaque=\(AuthenticationSyntax.quoted(opaque))")
        }
        if challenge.userhash {
            fields.append("userhash=true")
        }

        return DigestAuthorization(
            headerValue: "Digest " + fields.joined(separator: ", "),
            response: response,
            algorithm: algorithm,
            qop: qop,
            nonceCount: qop == nil ? nil : nonceCount
        )
    }

    /// `auth` if offered, else `auth-int` if offered, else none (RFC 2069 mode).
    static func selectQop(from options: [DigestQop]) -> DigestQop? {
        if options.contains(.auth) { return .auth }
        if options.contains(.authInt) { return .authInt }
        return nil
    }

    /// `H(entity-body)` in lowercase hexadecimal.
    private func bodyHash(_ body: DigestEntityBody?, algorithm: DigestHashAlgorithm) throws(CountersignError) -> String {
        switch body {
        case .bytes(let bytes):
            return AuthenticationSyntax.lowercaseHex(hashFunction(algorithm, bytes))
        case .hash(let hashAlgorithm, let hex):
            guard hashAlgorithm == algorithm else {
                throw CountersignError(
                    .digestEntityBodyRequired,
                    "the entity-body hash is \(hashAlgorithm.name) but the challenge uses \(algorithm.name); send the body instead"
                )
            }
            let isHex = hex.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
                    UInt8(ascii: "A")...UInt8(ascii: "F"):
                    true
                default:
                    false
                }
            }
            guard isHex, hex.utf8.count == algorithm.digestLength * 2 else {
                throw CountersignError(
                    .digestEntityBodyRequired,
                    "the entity-body hash must be \(algorithm.digestLength * 2) hexadecimal digits"
                )
            }
            return AuthenticationSyntax.lowercasedASCII(hex)
        case nil:
            throw CountersignError(
                .digestEntityBodyRequired,
                "the Digest challenge allows only qop=auth-int, which needs the request body"
            )
        }
    }

    /// `nc-value`: exactly 8 lowercase hexadecimal digits (RFC 7616 §3.4).
    static func nonceCountString(_ count: UInt32) -> String {
        let digits = String(count, radix: 16)
        return String(repeating: "0", count: 8 - digits.utf8.count) + digits
    }

    /// RFC 8187 `ext-value` with the UTF-8 charset and no language: `UTF-8''` then the bytes,
    /// `attr-char`s as they are and everything else as `%XX`.
    static func extendedValue(_ value: String) -> String {
        let hexDigits: StaticString = "0123456789ABCDEF"
        var out = Array("UTF-8''".utf8)
        hexDigits.withUTF8Buffer { table in
            for byte in value.utf8 {
                if isAttributeCharacter(byte) {
                    out.append(byte)
                } else {
                    out.append(UInt8(ascii: "%"))
                    out.append(table[Int(byte >> 4)])
                    out.append(table[Int(byte & 0x0F)])
                }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `attr-char` of RFC 8187 §3.2.1: a token character other than `*`, `'` and `%`.
    private static func isAttributeCharacter(_ byte: UInt8) -> Bool {
        AuthenticationSyntax.isTokenByte(byte) && byte != UInt8(ascii: "*") && byte != UInt8(ascii: "'") && byte != UInt8(ascii: "%")
    }
}
