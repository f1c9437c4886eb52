/// What ``AuthenticationChallengeSelector`` concluded about one challenge of a response.
public struct AuthenticationChallengeAssessment: Sendable, Hashable {
    /// The verdict on a challenge.
    public enum Status: Sendable, Hashable {
        /// The challenge to answer.
        case chosen
        /// Its scheme is unknown or not in the preference list (Negotiate and Bearer by default).
        case unsupportedScheme
        /// A Digest challenge whose algorithm or qop is not implemented, or whose hash is not in
        /// the preference list.
        case unsupportedAlgorithm
        /// Answerable, but no usable credential is held for its scheme and realm.
        case noCredential
        /// Answerable with a credential held, but a stronger one was chosen.
        case lowerPreference
        /// It breaks its scheme's rules; the code says how (`duplicate_parameter`,
        /// `missing_challenge_parameter`, `invalid_challenge_parameter`...).
        case malformed(CountersignError.Code)
    }

    /// Position of the challenge in the parsed list.
    public let index: Int
    /// The challenge.
    public let challenge: AuthenticationChallenge
    /// The mechanism that would answer it, when its scheme (and for Digest its algorithm) is
    /// recognized.
    public let mechanism: AuthenticationMechanism?
    /// The validated Digest challenge, for a Digest challenge that passed validation.
    public let digest: DigestChallenge?
    /// The verdict.
    public let status: Status
    /// Why, in words safe to show (it never contains a credential).
    public let reason: String
}
