/// Scans one `WWW-Authenticate` / `Proxy-Authenticate` field value; the grammar decisions are
/// documented on ``AuthenticationChallengeParser``.
///
/// Every loop advances `index`; the only look-ahead (token68 or auth-param after a scheme) scans
/// forward once and, when it fails, the same bytes are scanned once more as an auth-param. So each
/// byte is read at most three times and parsing stays linear in the input.
struct ChallengeFieldScanner {
    private let bytes: [UInt8]
    private let fieldNumber: Int
    private let limits: AuthenticationChallengeParser.Limits
    private var index = 0

    init(bytes: [UInt8], fieldNumber: Int, limits: AuthenticationChallengeParser.Limits) {
        self.bytes = bytes
        self.fieldNumber = fieldNumber
        self.limits = limits
    }

    /// A challenge whose auth-params may still continue in the next list element.
    private struct Pending {
        var scheme: String
        var parameters: [AuthenticationParameter] = []
        var token68: String?

        func build() -> AuthenticationChallenge {
            AuthenticationChallenge(uncheckedScheme: scheme, parameters: parameters, token68: token68)
        }
    }

    mutating func scan(into challenges: inout [AuthenticationChallenge]) throws(CountersignError) {
        var pending: Pending?
        while true {
            skipWhitespace()
            guard index < bytes.count else { break }
            if bytes[index] == AuthenticationSyntax.comma {
                index += 1
                continue
            }

            let elementStart = index
            let name = try scanToken(expecting: "an auth-scheme or auth-param name")
            let afterName = index
            skipWhitespace()

            if index < bytes.count, bytes[index] == AuthenticationSyntax.equals {
                // `name = value`: one more auth-param of the challenge before it.
                guard pending != nil else {
                    throw malformed(at: elementStart, "auth-param before any auth-scheme")
                }
                guard pending?.token68 == nil else {
                    throw malformed(at: elementStart, "auth-param after a token68 challenge")
                }
                index += 1
                skipWhitespace()
                let value = try scanValue()
                // Appended in place: a copy of `pending` would copy its parameter array each time.
                try append(
                    AuthenticationParameter(uncheckedName: AuthenticationSyntax.lowercasedASCII(name), value: value),
                    to: &pending!
                )
            } else {
                // Anything else that starts with a token starts a new challenge.
                if let finished = pending {
                    challenges.append(finished.build())
                }
                guard challenges.count < limits.maximumChallenges else {
                    throw CountersignError(
                        .tooManyChallenges,
                        "authentication field value #\(fieldNumber) at byte \(elementStart): more than \(limits.maximumChallenges) challenges"
                    )
                }
                var current = Pending(scheme: String(decoding: name, as: UTF8.self))
                if index == bytes.count || bytes[index] == AuthenticationSyntax.comma {
                    // A scheme alone, like `Negotiate` or `NTLM`.
                } else if index == afterName {
                    throw malformed(at: index, "expected a space after the auth-scheme, found \(describe(bytes[index]))")
                } else if let end = token68End() {
                    current.token68 = String(decoding: bytes[index..<end], as: UTF8.self)
                    index = end
                } else {
                    let parameterName = try scanToken(expecting: "a token68 or an auth-param name")
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == AuthenticationSyntax.equals else {
                        throw malformed(at: index, "expected '=' after an auth-param name, found \(describeCurrent())")
                    }
                    index += 1
                    skipWhitespace()
                    let value = try scanValue()
                    try append(
                        AuthenticationParameter(uncheckedName: AuthenticationSyntax.lowercasedASCII(parameterName), value: value),
                        to: &current
                    )
                }
                pending = current
            }

            // The element is complete: only whitespace may separate it from the next comma.
            skipWhitespace()
            guard index < bytes.count else { break }
            guard bytes[index] == AuthenticationSyntax.comma else {
                throw malformed(at: index, "expected ',' or the end of the value, found \(describe(bytes[index]))")
            }
            index += 1
        }
        if let finished = pending {
            challenges.append(finished.build())
        }
    }

    private func append(_ parameter: AuthenticationParameter, to challenge: inout Pending) throws(CountersignError) {
        guard challenge.parameters.count < limits.maximumParametersPerChallenge else {
            throw CountersignError(
                .tooManyParameters,
                "authentication field value #\(fieldNumber) at byte \(index): more than \(limits.maximumParametersPerChallenge) auth-params in one challenge"
            )
        }
        challenge.parameters.append(parameter)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, AuthenticationSyntax.isWhitespace(bytes[index]) {
            index += 1
        }
    }

    /// A non-empty run of token characters.
    private mutating func scanToken(expecting expected: String) throws(CountersignError) -> ArraySlice<UInt8> {
        let start = index
        while index < bytes.count, AuthenticationSyntax.isTokenByte(bytes[index]) {
            index += 1
        }
        guard index > start else {
            throw malformed(at: index, "expected \(expected), found \(describeCurrent())")
        }
        return bytes[start..<index]
    }

    /// Where a token68 starting at `index` ends, if the rest of the list element is exactly one
    /// token68 (followed only by whitespace, then a comma or the end). Does not move `index`.
    private func token68End() -> Int? {
        var cursor = index
        while cursor < bytes.count, AuthenticationSyntax.isToken68Byte(bytes[cursor]) {
            cursor += 1
        }
        guard cursor > index else { return nil }
        while cursor < bytes.count, bytes[cursor] == AuthenticationSyntax.equals {
            cursor += 1
        }
        let end = cursor
        while cursor < bytes.count, AuthenticationSyntax.isWhitespace(bytes[cursor]) {
            cursor += 1
        }
        guard cursor == bytes.count || bytes[cursor] == AuthenticationSyntax.comma else { return nil }
        return end
    }

    /// An auth-param value: a token or a quoted-string.
    private mutating func scanValue() throws(CountersignError) -> String {
        guard index < bytes.count else {
            throw malformed(at: index, "missing auth-param value")
        }
        if bytes[index] == AuthenticationSyntax.doubleQuote {
            return try scanQuotedString()
        }
        let token = try scanToken(expecting: "a token or quoted-string value")
        return String(decoding: token, as: UTF8.self)
    }

    /// A quoted-string, returned without its quotes and with quoted-pairs resolved.
    private mutating func scanQuotedString() throws(CountersignError) -> String {
        let opening = index
        index += 1
        // Most values have no escapes and are decoded straight from the input slice; the buffer
        // is only filled (and allocated) once a quoted-pair shows up.
        var unescaped: [UInt8] = []
        var sawEscape = false
        var runStart = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == AuthenticationSyntax.doubleQuote {
                let text: String?
                if sawEscape {
                    unescaped.append(contentsOf: bytes[runStart..<index])
                    text = String(validating: unescaped, as: UTF8.self)
                } else {
                    text = String(validating: bytes[runStart..<index], as: UTF8.self)
                }
                guard let text else {
                    throw malformed(at: opening, "quoted-string is not valid UTF-8")
                }
                index += 1
                return text
            } else if byte == AuthenticationSyntax.backslash {
                guard index + 1 < bytes.count else { break }
                let escaped = bytes[index + 1]
                guard AuthenticationSyntax.isQuotedPairByte(escaped) else {
                    throw malformed(at: index + 1, "\(describe(escaped)) cannot be escaped in a quoted-string")
                }
                sawEscape = true
                unescaped.append(contentsOf: bytes[runStart..<index])
                unescaped.append(escaped)
                index += 2
                runStart = index
            } else if AuthenticationSyntax.isQuotedTextByte(byte) {
                index += 1
            } else {
                throw malformed(at: index, "\(describe(byte)) in a quoted-string")
            }
        }
        throw malformed(at: opening, "unterminated quoted-string")
    }

    private func malformed(at offset: Int, _ problem: String) -> CountersignError {
        CountersignError(.malformedChallenge, "authentication field value #\(fieldNumber) at byte \(offset): \(problem)")
    }

    private func describeCurrent() -> String {
        index < bytes.count ? describe(bytes[index]) : "the end of the value"
    }

    /// Names a byte without echoing input that could be anything: printable ASCII is quoted,
    /// the rest is shown as hex.
    private func describe(_ byte: UInt8) -> String {
        switch byte {
        case 0x21...0x7E: "'\(Character(Unicode.Scalar(byte)))'"
        case AuthenticationSyntax.space: "a space"
        case AuthenticationSyntax.horizontalTab: "a tab"
        case 0x80...: "non-ASCII byte 0x\(String(byte, radix: 16, uppercase: true))"
        default: "control character 0x\(String(byte, radix: 16, uppercase: true))"
        }
    }
}
