/// Why a forwarded raw response got the answer it got, as a stable code clients can act on.
public enum ResponseReasonCode: String, StrictStringEnum {
    /// `useCredential`: send the request again with the header in `authorization`.
    case authorization = "authorization"
    /// `useCredential` after a Digest `stale=true`: the nonce expired, the credential was fine;
    /// send the new header. Not a rejection.
    case staleNonce = "stale_nonce"
    /// `useCredential` for NTLM: a connection handshake a header cannot answer, so the credential
    /// itself is released and the client runs the handshake.
    case ntlmHandshake = "ntlm_handshake"
    /// The credential that would answer is blocked after too many rejections.
    case credentialBlocked = "credential_blocked"
    /// A 403 followed a credential Countersign released: the credential was good, the server
    /// refuses anyway. Retrying will not help; not counted as a rejection.
    case serverRefused = "server_refused"
    /// A rule would release a credential, but none fits (the rule's failure disposition).
    case noCredential = "no_credential"
    /// No policy rule speaks about any answerable challenge: `performDefaultHandling`.
    case noMatchingRule = "no_matching_rule"
    /// A rule (or the session's memory) answers with a disposition other than `useCredential`.
    case policy = "policy"
    /// No challenge is one Countersign answers (Negotiate, Bearer, unknown schemes or Digest
    /// algorithms, schemes left out of `preferredSchemes`).
    case noSupportedChallenge = "no_supported_challenge"
}
