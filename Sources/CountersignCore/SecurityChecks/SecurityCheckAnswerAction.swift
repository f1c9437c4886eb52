/// What the client's challenge handler should do, in MobileFirst's terms.
public enum SecurityCheckAnswerAction: String, StrictStringEnum {
    /// `submitChallengeAnswer(answer)`.
    case submitChallengeAnswer
    /// `cancel()`.
    case cancel
    /// No handler here: the client's own challenge handler takes the challenge.
    case unhandled
}
