import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Security)
import Security
#endif

/// What the delegate reads from a `URLAuthenticationChallenge`, taken on the delegate queue
/// when the challenge arrives, as plain values that may cross into the task that asks Countersign.
struct ChallengeSnapshot: Sendable {
    var space: ProtectionSpace
    /// What URLSession proposed: its user, and whether it had a password (never the password).
    var proposedCredential: ProposedCredential?
    var previousFailureCount: Int
    var failureResponse: FailureResponse?
    var error: ChallengeError?
    #if canImport(Security)
    /// For server-trust challenges: the credential that trusts the server's chain, made ready here
    /// because the `SecTrust` belongs to the challenge.
    var trustCredential: ImmutableReference<URLCredential>?
    #endif

    /// Headers never forwarded: Countersign does not need cookies to decide, and a cookie is a
    /// secret of the app's own session with the upstream server.
    static let withheldHeaders: Set<String> = ["set-cookie", "set-cookie2"]
    /// The contract takes at most this many failure-response headers.
    static let maxHeaders = 200

    init(_ challenge: URLAuthenticationChallenge) {
        let source = challenge.protectionSpace
        space = ProtectionSpace(
            host: source.host,
            port: source.port,
            protocolName: source.protocol,
            realm: source.realm,
            authenticationMethod: AuthenticationMethod(rawValue: source.authenticationMethod),
            isProxy: source.isProxy(),
            proxyType: source.proxyType,
            receivesCredentialSecurely: source.receivesCredentialSecurely
        )
        #if canImport(Security)
        // FoundationNetworking has no client-certificate challenges (its `distinguishedNames` is a
        // deprecated stub), so only Apple's are forwarded.
        space.distinguishedNames = source.distinguishedNames
        if let trust = source.serverTrust {
            if let chain = SecTrustCopyCertificateChain(trust) as? [SecCertificate] {
                space.serverTrust = ServerTrustChain(certificates: chain.map { SecCertificateCopyData($0) as Data })
            }
            trustCredential = ImmutableReference(URLCredential(trust: trust))
        }
        #endif
        proposedCredential = challenge.proposedCredential.map { ProposedCredential(user: $0.user, hasPassword: $0.hasPassword) }
        previousFailureCount = challenge.previousFailureCount
        failureResponse = (challenge.failureResponse as? HTTPURLResponse).map { response in
            FailureResponse(status: response.statusCode, headers: Self.forwardedHeaders(of: response))
        }
        error = challenge.error.map { error in
            let error = error as NSError
            return ChallengeError(domain: error.domain, code: error.code, message: error.localizedDescription)
        }
    }

    /// A snapshot of values, for tests and for callers that build challenges themselves.
    init(space: ProtectionSpace, proposedCredential: ProposedCredential? = nil, previousFailureCount: Int = 0, failureResponse: FailureResponse? = nil) {
        self.space = space
        self.proposedCredential = proposedCredential
        self.previousFailureCount = previousFailureCount
        self.failureResponse = failureResponse
    }

    /// The challenge as the contract forwards it, for the task named `taskId`.
    func challenge(taskId: String) -> Challenge {
        Challenge(
            taskId: taskId,
            protectionSpace: space,
            proposedCredential: proposedCredential,
            previousFailureCount: previousFailureCount,
            failureResponse: failureResponse,
            error: error
        )
    }

    /// The status that refused the credential this challenge follows, when it is a retry.
    var failureStatus: Int {
        failureResponse?.status ?? PlatformBehaviour.authenticationFailureStatus(isProxy: space.isProxy)
    }

    static func forwardedHeaders(of response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, let value = value as? String else { continue }
            guard !withheldHeaders.contains(name.lowercased()) else { continue }
            headers[name] = value
        }
        guard headers.count > maxHeaders else { return headers }
        // The challenges first: they are what the service answers (`W` and `P` sort late).
        let kept = headers.sorted { (isChallenge($0.key) ? 0 : 1, $0.key) < (isChallenge($1.key) ? 0 : 1, $1.key) }.prefix(maxHeaders)
        return Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
    }

    private static func isChallenge(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered == "www-authenticate" || lowered == "proxy-authenticate"
    }
}

#if canImport(Security)
/// A Foundation or Security object that nothing mutates after it is made (`URLCredential`),
/// carried from the delegate queue into the task that answers the challenge.
///
/// Safe to send: the wrapped object is created once, never mutated afterwards by this module or
/// by Foundation (`URLCredential` has no mutating API), and reading an immutable object from
/// several threads does not race. Only immutable objects may be wrapped.
struct ImmutableReference<Value: AnyObject>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
#endif
