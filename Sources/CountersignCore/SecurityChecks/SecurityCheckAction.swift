/// What a handler does with its check.
public enum SecurityCheckAction: String, StrictStringEnum {
    /// Answer with the handler's answer object, filled from its credential.
    case submitChallengeAnswer
    /// Tell the client to cancel the challenge.
    case cancel
}
