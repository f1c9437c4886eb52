public import Foundation

/// A raw 401, 407 or 403 response as a client that does not parse challenges forwards it
/// (CFHTTPAuthentication style): the status, every header as received, and the request it
/// answered.
///
/// Decoded as the client sent it; ``validated()`` checks it and derives what answering needs.
public struct RawResponse: Codable, Hashable, Sendable {
    /// The client's name for the request that met the response; a second 401 for the same task
    /// shows the header Countersign issued for it was refused.
    public var taskId: String
    /// 401 (origin server), 407 (proxy), or 403 (the server refused a request that carried a
    /// credential Countersign released).
    public var status: Int
    /// Every response header as a `[name, value]` pair, in order, repeated headers kept.
    public var headers: [[String]]
    /// The request that got this response.
    public var request: ForwardedRequest
    /// For a 407: the proxy that asked. Required for 407 and refused otherwise, because its
    /// host and port are the protection space of a proxy challenge.
    public var proxy: ForwardedProxy?
    /// The decision whose header the request carried, if the client kept it. Without it, the
    /// latest credential released for this task and server is meant.
    public var previousDecisionId: UUID?
    /// `false`: the request carried no header Countersign issued (the task's first request, or
    /// one sent before an answer that never arrived), so the response judges no release. Without
    /// it, a forward repeated after a lost answer (a 503 after the decision was recorded, a
    /// dropped connection) would take the release it never received for the one it sent.
    public var carriedHeader: Bool?

    public init(
        taskId: String,
        status: Int,
        headers: [[String]],
        request: ForwardedRequest,
        proxy: ForwardedProxy? = nil,
        previousDecisionId: UUID? = nil,
        carriedHeader: Bool? = nil
    ) {
        self.taskId = taskId
        self.status = status
        self.headers = headers
        self.request = request
        self.proxy = proxy
        self.previousDecisionId = previousDecisionId
        self.carriedHeader = carriedHeader
    }

    /// Most header pairs accepted; the challenge fields are bounded by the parser's own limits.
    public static let maximumHeaders = 2000
    /// Longest header name.
    public static let maximumHeaderNameLength = 256
    /// Longest request URL or request-target.
    public static let maximumURLLength = 8192

    /// Checks the response and derives the protection-space target, the challenges, the Digest
    /// `uri` and the entity-body.
    ///
    /// - Throws: `invalid_field` (and the other request-shape codes) for a malformed request;
    ///   the parser's codes (`malformed_challenge`, `challenge_too_large`, `too_many_challenges`,
    ///   `too_many_parameters`) for hostile or broken challenge fields; `missing_challenge` for a
    ///   401/407 without any challenge.
    public func validated(parser: AuthenticationChallengeParser = AuthenticationChallengeParser()) throws -> RawResponseContext {
        try Validation.name(taskId, field: "taskId")
        guard [401, 403, 407].contains(status) else {
            throw CountersignError(.invalidEnumValue, "'status' must be one of 401, 403, 407")
        }
        if status == 407 {
            guard proxy != nil else { throw CountersignError(.missingField, "'proxy' is required with status 407") }
        } else if status == 401, proxy != nil {
            throw CountersignError(.invalidField, "'proxy' is only for status 407 (or a 403 from a proxy)")
        }
        if carriedHeader == false, previousDecisionId != nil {
            throw CountersignError(.invalidField, "'previousDecisionId' names the header the request carried; with 'carriedHeader' false it carried none")
        }

        // The challenge fields are gathered and parsed before anything else is counted, so that
        // hostile input gets the parser's code whatever else the headers hold.
        let challengeField = status == 407 ? "proxy-authenticate" : "www-authenticate"
        var fieldValues: [String] = []
        for (index, pair) in headers.enumerated() {
            guard pair.count == 2 else {
                throw CountersignError(.invalidField, "'headers[\(index)]' must be a [name, value] pair")
            }
            let name = pair[0]
            guard !name.isEmpty, name.utf8.count <= Self.maximumHeaderNameLength, AuthenticationSyntax.isToken(name) else {
                throw CountersignError(.invalidField, "'headers[\(index)][0]' must be a header name")
            }
            if AuthenticationSyntax.equalsIgnoringASCIICase(name, challengeField) {
                fieldValues.append(pair[1])
            }
        }
        var challenges: [AuthenticationChallenge] = []
        if status != 403 {
            challenges = try parser.parse(fieldValues)
            guard !challenges.isEmpty else {
                throw CountersignError(
                    .missingChallenge,
                    "a \(status) must carry \(status == 407 ? "Proxy-Authenticate" : "WWW-Authenticate") with at least one challenge"
                )
            }
        }
        guard headers.count <= Self.maximumHeaders else {
            throw CountersignError(.invalidField, "'headers' has more than \(Self.maximumHeaders) entries")
        }

        let url = try request.parsedURL()
        let target: RawResponseContext.Target
        if let proxy {
            try proxy.validate()
            target = .init(host: proxy.host, port: proxy.port, protocolName: proxy.protocolName, isProxy: true)
        } else {
            target = .init(host: url.host, port: url.port, protocolName: url.scheme, isProxy: false)
        }
        let requestTarget = try request.requestTarget(url: url, throughProxy: status == 407)
        let method = try request.digestMethod(url: url, throughProxy: status == 407)
        let context = RawResponseContext(
            taskId: taskId,
            status: status,
            challenges: challenges,
            target: target,
            method: method,
            requestTarget: requestTarget,
            entityBody: try request.entityBody(),
            previousDecisionId: previousDecisionId,
            carriedHeader: carriedHeader != false
        )
        for (index, challenge) in challenges.enumerated() where !context.protectionSpace(scheme: challenge.scheme, realm: challenge.realm).keyFits {
            throw CountersignError(
                .challengeTooLarge,
                "the realm of challenge #\(index + 1) is too long for its space: protocol, host, realm and method together may take \(ProtectionSpace.maximumKeyBytes) bytes of UTF-8 (`%` and `|` count three)"
            )
        }
        return context
    }
}
