public import Foundation

// Error codes of forwarded raw 401/403/407 responses (`POST /v1/sessions/{id}/responses`).
//
// These strings are part of the public API: clients match on them. Add codes; never rename one.
// The parser's own codes (`malformed_challenge`, `challenge_too_large`, `too_many_challenges`,
// `too_many_parameters`) and the Digest ones come from CountersignError+Authentication.swift.
extension CountersignError.Code {
    /// A 401 without `WWW-Authenticate`, or a 407 without `Proxy-Authenticate`, or one whose
    /// fields hold no challenge at all: there is nothing to answer.
    public static let missingChallenge = Self("missing_challenge", kind: .invalidInput)

    /// A 403 was forwarded for a task to which Countersign released no credential (for that
    /// server), so there is no credential the refusal could follow.
    public static let noReleasedCredential = Self("no_released_credential", kind: .conflict)

    /// Another response for the same task already continued the release this one answers (with
    /// a renewed Digest nonce, the server's next NTLM message), so this one can neither continue
    /// nor fail it: a task's responses come one at a time, each after the answer to the one before.
    public static let attemptAlreadyContinued = Self("attempt_already_continued", kind: .conflict)
}

extension CountersignError {
    /// A response for `taskID` that would continue, or reject, release `decisionID` after
    /// another response already went on from it.
    public static func attemptAlreadyContinued(taskID: String, decisionID: UUID) -> Self {
        Self(
            .attemptAlreadyContinued,
            "another response for task '\(taskID)' already went on from decision \(decisionID); forward a task's responses one at a time, each after the answer to the one before"
        )
    }
}
