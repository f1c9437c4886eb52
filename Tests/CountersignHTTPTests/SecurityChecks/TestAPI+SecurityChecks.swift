import Foundation
import HTTPTypes
import Testing

/// The steps the security-check tests repeat: handlers in the policy, challenge lists, reports.
extension TestAPI {
    /// Replaces the policy with no rules and `handlers` (JSON text of the `securityChecks` array).
    @discardableResult
    func securityCheckHandlers(_ tenant: Tenant, _ handlers: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Reply {
        let reply = try await putSecurityCheckHandlers(tenant, handlers, sourceLocation: sourceLocation)
        try #require(reply.status == 200, "\(reply)", sourceLocation: sourceLocation)
        return reply
    }

    /// The PUT of `securityCheckHandlers`, whatever it answers.
    func putSecurityCheckHandlers(_ tenant: Tenant, _ handlers: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Reply {
        let current = try await call(.get, "/v1/policy", key: tenant.adminKey, sourceLocation: sourceLocation)
        let version = current.json["version"] as? Int ?? 0
        return try await call(
            .put, "/v1/policy", key: tenant.adminKey,
            json: #"{"version": \#(version), "rules": [], "securityChecks": \#(handlers)}"#,
            sourceLocation: sourceLocation
        )
    }

    /// Forwards a challenge list; `challenges` is the JSON text of the `challenges` object.
    func securityChecks(_ tenant: Tenant, session: String, _ challenges: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Reply {
        try await call(
            .post, "/v1/sessions/\(session)/security-checks", key: tenant.clientKey,
            json: #"{"challenges": \#(challenges)}"#,
            sourceLocation: sourceLocation
        )
    }

    /// Reports a `failure` or `success` payload (JSON text) for `check`.
    func reportSecurityCheck(
        _ tenant: Tenant,
        session: String,
        check: String,
        _ kind: String,
        payload: String = "{}",
        decisionId: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Reply {
        let query = decisionId.map { "?decisionId=\($0)" } ?? ""
        return try await call(
            .post, "/v1/sessions/\(session)/security-checks/\(check)/\(kind)\(query)", key: tenant.clientKey,
            json: payload,
            sourceLocation: sourceLocation
        )
    }

    /// The admin's view of the states of `clientId`.
    func securityCheckStates(_ tenant: Tenant, clientId: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [[String: Any]] {
        let reply = try await call(.get, "/v1/security-checks/states?clientId=\(clientId)", key: tenant.adminKey, sourceLocation: sourceLocation)
        try #require(reply.status == 200, "\(reply)", sourceLocation: sourceLocation)
        return reply.json["states"] as? [[String: Any]] ?? []
    }
}

extension Reply {
    /// `answers.<check>` of a security-check reply.
    func answer(_ check: String) -> [String: Any]? {
        (json["answers"] as? [String: Any])?[check] as? [String: Any]
    }

    /// `state` of a report reply.
    var securityCheckState: [String: Any]? { json["state"] as? [String: Any] }
}

/// A MobileFirst server's `PinCodeAttempts` check (`CredentialsValidationSecurityCheck`), in
/// miniature: it knows the PIN, counts the client's attempts, challenges with
/// `remainingAttempts` and `errorMsg`, and fails with "Account blocked" when they run out.
/// The tests play the client between it and Countersign.
struct PinCodeServer {
    var pin: String
    var maxAttempts: Int
    private(set) var remainingAttempts: Int
    private(set) var errorMessage: String?
    private(set) var submissions: [String] = []

    init(pin: String, maxAttempts: Int) {
        self.pin = pin
        self.maxAttempts = maxAttempts
        remainingAttempts = maxAttempts
    }

    /// The challenge list as the server sends it (JSON text of the `challenges` object).
    var challenge: String {
        let error = errorMessage.map { "\"\($0)\"" } ?? "null"
        return #"{"PinCodeAttempts": {"remainingAttempts": \#(remainingAttempts), "errorMsg": \#(error)}}"#
    }

    enum Verdict: Equatable {
        case success
        /// Wrong PIN, attempts remain: the server challenges again.
        case challengedAgain
        /// Wrong PIN, no attempt left: the failure payload.
        case failure(String)
    }

    /// `validateCredentials` on the answer the client submitted.
    mutating func submit(_ answer: [String: Any]) -> Verdict {
        let given = answer["pin"] as? String ?? ""
        submissions.append(given)
        if given == pin {
            remainingAttempts = maxAttempts
            errorMessage = nil
            return .success
        }
        remainingAttempts -= 1
        errorMessage = "Pin code is not valid."
        return remainingAttempts > 0 ? .challengedAgain : .failure("Account blocked")
    }
}
