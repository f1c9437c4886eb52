/// The service's answers to a challenge list: one per check, by check name.
public struct SecurityCheckAnswers: Codable, Hashable, Sendable {
    public var answers: [String: SecurityCheckAnswer]

    public init(answers: [String: SecurityCheckAnswer]) {
        self.answers = answers
    }
}
