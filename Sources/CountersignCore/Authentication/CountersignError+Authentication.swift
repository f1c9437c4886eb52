// Error codes of HTTP authentication parsing and answering (RFC 9110 §11, RFC 7616, RFC 7617).
//
// These strings are part of the public API: clients match on them. Add codes; never rename one.
extension CountersignError.Code {
    // MARK: Challenge parsing (the syntax of WWW-Authenticate / Proxy-Authenticate)

    /// A `WWW-Authenticate` / `Proxy-Authenticate` value does not follow the RFC 9110 §11 grammar
    /// (unterminated quoted-string, control character, missing value, stray character...).
    /// The message names the header value and byte offset.
    public static let malformedChallenge = Self("malformed_challenge", kind: .invalidInput)

    /// One header value, or all of them together, exceed the parser's byte limits.
    public static let challengeTooLarge = Self("challenge_too_large", kind: .invalidInput)

    /// More challenges than the parser accepts in one response.
    public static let tooManyChallenges = Self("too_many_challenges", kind: .invalidInput)

    /// More auth-params in one challenge than the parser accepts.
    public static let tooManyParameters = Self("too_many_parameters", kind: .invalidInput)

    /// A challenge names the same auth-param twice, which RFC 9110 §11.2 forbids.
    /// Such a challenge is never answered: which of the two values the server meant is unknowable.
    public static let duplicateParameter = Self("duplicate_parameter", kind: .invalidInput)

    // MARK: Challenge semantics

    /// A challenge lacks a parameter its scheme requires (Digest `realm` or `nonce`).
    public static let missingChallengeParameter = Self("missing_challenge_parameter", kind: .invalidInput)

    /// A challenge parameter has a value its scheme does not allow (for example Digest `charset`
    /// other than UTF-8, or a Digest challenge sent as token68).
    public static let invalidChallengeParameter = Self("invalid_challenge_parameter", kind: .invalidInput)

    /// A Digest challenge asks for an `algorithm` Countersign does not implement.
    public static let unsupportedDigestAlgorithm = Self("unsupported_digest_algorithm", kind: .invalidInput)

    /// A Digest challenge offers only `qop` values Countersign does not implement.
    public static let unsupportedDigestQop = Self("unsupported_digest_qop", kind: .invalidInput)

    // MARK: Answering

    /// A Basic user-id contains a colon (RFC 7617 §2 forbids it) or a control character.
    public static let invalidBasicUser = Self("invalid_basic_user", kind: .invalidInput)

    /// A Basic password contains a control character.
    public static let invalidBasicPassword = Self("invalid_basic_password", kind: .invalidInput)

    /// A Digest user name is empty or contains a control character.
    public static let invalidDigestUser = Self("invalid_digest_user", kind: .invalidInput)

    /// The request the Digest answer is for cannot be encoded: the method is not a token, the
    /// request-target or cnonce contains characters a header cannot carry, or the nonce count is 0.
    public static let invalidDigestRequest = Self("invalid_digest_request", kind: .invalidInput)

    /// The Digest challenge allows only `qop=auth-int`, and no usable entity-body (or hash of it,
    /// under the challenge's algorithm) came with the request.
    public static let digestEntityBodyRequired = Self("digest_entity_body_required", kind: .invalidInput)
}
