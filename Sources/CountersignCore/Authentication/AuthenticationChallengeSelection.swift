/// The outcome of ``AuthenticationChallengeSelector/select(from:hasCredential:)``: the chosen
/// challenge, if any, and a verdict on every challenge of the response.
public struct AuthenticationChallengeSelection: Sendable, Hashable {
    /// One assessment per challenge, in the order of the challenges given.
    public let assessments: [AuthenticationChallengeAssessment]

    /// The chosen challenge's assessment, or `nil` when none can be answered.
    public var chosen: AuthenticationChallengeAssessment? {
        assessments.first { $0.status == .chosen }
    }

    /// Whether every challenge was malformed, which is the server's fault, not a missing
    /// credential or a missing feature.
    public var isEveryChallengeMalformed: Bool {
        !assessments.isEmpty
            && assessments.allSatisfy {
                if case .malformed = $0.status { true } else { false }
            }
    }
}
