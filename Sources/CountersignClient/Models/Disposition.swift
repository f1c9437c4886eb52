/// Apple's four answers to a challenge (`URLSession.AuthChallengeDisposition`).
///
/// A closed set on purpose: an answer this client cannot act on must not be guessed at. A service
/// answer with another value fails to decode, and the delegate falls back (see
/// ``CountersignSessionDelegate/Configuration/fallback``).
public enum Disposition: String, Codable, Hashable, Sendable, CaseIterable {
    case useCredential
    case performDefaultHandling
    case cancelAuthenticationChallenge
    case rejectProtectionSpace
}
