import CountersignCore
import CountersignService
import CountersignStorage
import Foundation
import Hummingbird
import Logging

/// The admin API for the tenant's policy: read, replace as a whole, explain.
struct PolicyController: Sendable {
    let policies: PolicyStore
    let decisions: DecisionService
    let cache: DecisionStateCache
    let body: JSONBody

    /// A policy as read and as written: `version` is the version read, which a replacement
    /// must name (optimistic concurrency).
    struct PolicyDocument: Codable {
        var version: Int
        var settings: PolicySettings?
        var rules: [PolicyRule]
        var securityChecks: [SecurityCheckHandler]?
        var updatedAt: Date?
        var updatedBy: String?

        init(_ versioned: PolicyStore.Versioned) {
            version = versioned.version
            settings = versioned.policy.settings
            rules = versioned.policy.rules
            securityChecks = versioned.policy.securityChecks
            updatedAt = versioned.updatedAt
            updatedBy = versioned.updatedBy
        }
    }

    struct Explain: Codable {
        var challenge: Challenge
        var clientId: String?
        var sessionId: UUID?
    }

    struct Explanation: Encodable {
        var disposition: Disposition
        var credential: CredentialView?
        var persistence: Persistence
        var scope: DecisionScope
        var rule: RuleReference?
        var source: DecisionSource
        var reason: String
        var blockedUntil: Date?
        var maxFailures: Int?
        /// The client identity a client-certificate challenge would get (never its key).
        var identity: IdentityView? = nil
        /// The server-trust evaluation of the presented chain.
        var evaluation: ServerTrustVerdict? = nil
        /// The named session, when it has ended: a challenge in it is refused.
        var sessionEnded: EndedSession? = nil
        /// The release a retry would count as rejected before it is answered (not counted here).
        var countedRejection: UUID? = nil

        struct EndedSession: Encodable {
            var invalidatedAt: Date
            var invalidationReason: InvalidationReason

            init?(_ session: Session?) {
                guard let session, let invalidatedAt = session.invalidatedAt, let reason = session.invalidationReason else { return nil }
                self.invalidatedAt = invalidatedAt
                self.invalidationReason = reason
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(disposition, forKey: .disposition)
            try container.encode(credential, forKey: .credential)
            try container.encode(persistence, forKey: .persistence)
            try container.encode(scope, forKey: .scope)
            try container.encode(rule, forKey: .rule)
            try container.encode(source, forKey: .source)
            try container.encode(reason, forKey: .reason)
            try container.encode(blockedUntil, forKey: .blockedUntil)
            try container.encode(maxFailures, forKey: .maxFailures)
            try container.encode(identity, forKey: .identity)
            try container.encode(evaluation, forKey: .evaluation)
            try container.encode(sessionEnded, forKey: .sessionEnded)
            try container.encode(countedRejection.map(\.text), forKey: .countedRejection)
        }

        enum CodingKeys: String, CodingKey {
            case disposition, credential, persistence, scope, rule, source, reason, blockedUntil, maxFailures, identity, evaluation, sessionEnded
            case countedRejection
        }
    }

    func addRoutes(to group: RouterGroup<AdminRequestContext>) {
        group.get { _, context in
            try JSONResponse.make(PolicyDocument(try await policies.get(tenantID: context.tenantID)))
        }
        group.put { request, context in
            let input = try await body.decode(PolicyDocument.self, from: request)
            guard input.version >= 0 else {
                throw CountersignError(.invalidField, "'version' must be the version read (0 before the first policy)")
            }
            let policy = Policy(settings: input.settings ?? .init(), rules: input.rules, securityChecks: input.securityChecks ?? [])
            let saved = try await policies.replace(tenantID: context.tenantID, expectedVersion: input.version, with: policy, actor: context.actor)
            cache.forgetTenant(context.tenantID)
            context.logger.notice(
                "policy replaced",
                metadata: ["version": "\(saved.version)", "rules": "\(policy.rules.count)", "securityChecks": "\(policy.securityChecks.count)"]
            )
            return try JSONResponse.make(PolicyDocument(saved))
        }
        group.get("versions/:version") { _, context in
            // As an integer is written: digits, no sign, no leading zero (`Int` would take "+1").
            guard let text = context.parameters.get("version"), text.first != "0",
                text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let number = Int(text), number > 0
            else {
                throw CountersignError(.invalidID, "'version' must be a positive integer, at most \(Int64.max)")
            }
            guard let versioned = try await policies.version(number, tenantID: context.tenantID) else {
                throw CountersignError(.notFound, "no such policy version")
            }
            return try JSONResponse.make(PolicyDocument(versioned))
        }
        group.post("explain") { request, context in
            let input = try await body.decode(Explain.self, from: request)
            if let clientID = input.clientId { try Validation.name(clientID, field: "clientId") }
            let (plan, endedSession, countedRejection) = try await decisions.explain(
                input.challenge,
                tenantID: context.tenantID,
                clientID: input.clientId ?? "explain",
                sessionID: input.sessionId
            )
            // The identity's state as the explanation judged it: by the database's clock.
            let now = try await cache.settings(context.tenantID).databaseNow
            return try JSONResponse.make(
                Explanation(
                    disposition: plan.disposition,
                    credential: plan.credential.flatMap { $0.kind == .password ? CredentialView($0) : nil },
                    persistence: plan.persistence,
                    scope: plan.scope,
                    rule: plan.rule,
                    source: plan.source,
                    reason: plan.reason,
                    blockedUntil: plan.blockedUntil,
                    maxFailures: plan.maxFailures,
                    identity: plan.credential.flatMap { $0.kind == .clientIdentity ? IdentityView($0, now: now) : nil },
                    evaluation: plan.trust,
                    sessionEnded: Explanation.EndedSession(endedSession),
                    countedRejection: countedRejection
                )
            )
        }
    }
}
