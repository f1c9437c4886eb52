/// Picks the strongest challenge of a response that Countersign can answer with a credential it
/// holds, and says why every other challenge was passed over.
///
/// Each challenge goes through these checks in order; the first that fails gives its status:
/// 1. a mechanism of its scheme is in the preference list (else `unsupportedScheme`);
/// 2. it is well-formed for its scheme: no repeated parameter, a Basic challenge has no token68,
///    a Digest challenge validates as ``DigestChallenge`` (else `malformed(code)`, or
///    `unsupportedAlgorithm` for an unknown Digest algorithm or qop);
/// 3. its mechanism (for Digest: its hash) is in the preference list (else `unsupportedAlgorithm`);
/// 4. `hasCredential(scheme, realm)` is true (else `noCredential`).
///
/// Of the challenges that pass, the one whose mechanism comes first in the preference list is
/// `chosen`; on a tie the server's order decides (first wins). The rest are `lowerPreference`.
/// A Digest challenge that offers only `qop=auth-int`, for a request whose body cannot be hashed
/// under its algorithm (`canHashEntityBody`), is chosen only when no other challenge passes: its
/// answer would fail for want of the body, where another challenge's would not.
/// The selection is a pure function of its inputs.
public struct AuthenticationChallengeSelector: Sendable {
    /// Mechanisms from most to least preferred; anything absent is never chosen.
    public var preference: [AuthenticationMechanism]

    /// A selector with the given preference (by default
    /// ``AuthenticationMechanism/defaultPreference``).
    public init(preference: [AuthenticationMechanism] = AuthenticationMechanism.defaultPreference) {
        self.preference = preference
    }

    /// Assesses every challenge and chooses one.
    ///
    /// - Parameters:
    ///   - challenges: the parsed challenges of one response, in the server's order.
    ///   - hasCredential: whether a usable credential is held for a scheme and realm (`nil` for
    ///     schemes without realms, such as NTLM). Called at most once per challenge, only for
    ///     challenges that pass the other checks; its error, if any, is rethrown.
    ///   - canHashEntityBody: whether the request's body (or its hash) was forwarded in a form
    ///     that hashes under a Digest algorithm, as `qop=auth-int` needs.
    public func select<Failure: Error>(
        from challenges: [AuthenticationChallenge],
        canHashEntityBody: (DigestHashAlgorithm) -> Bool = { _ in true },
        hasCredential: (_ scheme: AuthenticationScheme, _ realm: String?) throws(Failure) -> Bool
    ) throws(Failure) -> AuthenticationChallengeSelection {
        var assessments: [AuthenticationChallengeAssessment] = []
        assessments.reserveCapacity(challenges.count)
        // Candidates have passed every check; their status is settled once the best is known.
        var candidates: [(position: Int, rank: Int, lacksBody: Bool)] = []

        for (index, challenge) in challenges.enumerated() {
            func assessment(
                _ status: AuthenticationChallengeAssessment.Status,
                _ reason: String,
                mechanism: AuthenticationMechanism? = nil,
                digest: DigestChallenge? = nil
            ) -> AuthenticationChallengeAssessment {
                AuthenticationChallengeAssessment(
                    index: index, challenge: challenge, mechanism: mechanism, digest: digest, status: status, reason: reason
                )
            }

            let scheme = challenge.scheme
            // Every scheme but Digest has exactly one mechanism, so this is the mechanism outright;
            // for Digest it only says that some Digest hash is wanted.
            guard let schemeMechanism = preference.first(where: { $0.scheme == scheme }) else {
                let reason =
                    switch scheme {
                    case .negotiate, .bearer: "\(scheme.name) is reported but not answered"
                    // A scheme name is a token (printable ASCII); only its length needs bounding.
                    case .other: "scheme '\(challenge.schemeName.prefix(40))' is not supported"
                    default: "\(scheme.name) is not in the preference list"
                    }
                // A scheme with one mechanism names it even when the preference leaves it out.
                let known: AuthenticationMechanism? =
                    switch scheme {
                    case .basic: .basic
                    case .ntlm: .ntlm
                    default: nil
                    }
                assessments.append(assessment(.unsupportedScheme, reason, mechanism: known))
                continue
            }

            let mechanism: AuthenticationMechanism
            var digest: DigestChallenge?
            var realm = challenge.realm
            if scheme == .digest {
                do throws(CountersignError) {
                    let validated = try DigestChallenge(challenge)
                    digest = validated
                    realm = validated.realm
                    mechanism = .digest(validated.algorithm.hashAlgorithm)
                } catch  where error.code == .unsupportedDigestAlgorithm || error.code == .unsupportedDigestQop {
                    assessments.append(assessment(.unsupportedAlgorithm, error.message))
                    continue
                } catch {
                    assessments.append(assessment(.malformed(error.code), error.message))
                    continue
                }
            } else {
                if let duplicate = challenge.duplicateParameterName {
                    assessments.append(
                        assessment(.malformed(.duplicateParameter), "\(scheme.name) challenge repeats the parameter '\(duplicate)'")
                    )
                    continue
                }
                if scheme == .basic, challenge.token68 != nil {
                    assessments.append(
                        assessment(.malformed(.invalidChallengeParameter), "a Basic challenge carries auth-params, not a token68")
                    )
                    continue
                }
                // RFC 7617 §2.1: UTF-8 is the only charset; the header is built in UTF-8, as Digest's.
                if scheme == .basic, let charset = challenge.parameter("charset"), !AuthenticationSyntax.equalsIgnoringASCIICase(charset, "UTF-8") {
                    assessments.append(assessment(.malformed(.invalidChallengeParameter), "Basic charset must be UTF-8"))
                    continue
                }
                mechanism = schemeMechanism
            }

            guard let rank = preference.firstIndex(of: mechanism) else {
                assessments.append(
                    assessment(.unsupportedAlgorithm, "\(mechanism) is not in the preference list", mechanism: mechanism, digest: digest)
                )
                continue
            }
            guard try hasCredential(scheme, realm) else {
                assessments.append(
                    assessment(.noCredential, "no usable credential for \(mechanism) in this realm", mechanism: mechanism, digest: digest)
                )
                continue
            }
            let lacksBody = digest.map { digest in
                DigestResponder.selectQop(from: digest.qopOptions) == .authInt && !canHashEntityBody(digest.algorithm.hashAlgorithm)
            } ?? false
            candidates.append((assessments.count, rank, lacksBody))
            assessments.append(assessment(.lowerPreference, "", mechanism: mechanism, digest: digest))
        }

        // The strictly smaller rank wins, so on a tie the earlier challenge stays chosen.
        let answerable = candidates.filter { !$0.lacksBody }
        if let best = (answerable.isEmpty ? candidates : answerable).min(by: { $0.rank < $1.rank }) {
            let chosenMechanism = assessments[best.position].mechanism.map(String.init(describing:)) ?? ""
            for candidate in candidates {
                let old = assessments[candidate.position]
                let isChosen = candidate.position == best.position
                assessments[candidate.position] = AuthenticationChallengeAssessment(
                    index: old.index,
                    challenge: old.challenge,
                    mechanism: old.mechanism,
                    digest: old.digest,
                    status: isChosen ? .chosen : .lowerPreference,
                    reason: isChosen
                        ? "strongest answerable challenge (\(chosenMechanism))"
                        : candidate.lacksBody && !best.lacksBody
                            ? "its only qop, auth-int, needs the request's body (request.body, or request.bodyHash under its algorithm); \(chosenMechanism) does not"
                            : "\(old.mechanism.map(String.init(describing:)) ?? "") ranks below the chosen \(chosenMechanism)"
                )
            }
        }
        return AuthenticationChallengeSelection(assessments: assessments)
    }
}
