public import CountersignCore
public import CountersignStorage
public import Foundation

/// Sessions and the credentials clients submit into them.
public struct SessionService: Sendable {
    let sessions: SessionStore
    let credentials: CredentialStore
    let cache: DecisionStateCache

    public init(sessions: SessionStore, credentials: CredentialStore, cache: DecisionStateCache) {
        self.sessions = sessions
        self.credentials = credentials
        self.cache = cache
    }

    /// Opens a session for `clientID`, living `ttlSeconds` (the tenant's default when `nil`,
    /// at most the tenant's maximum).
    public func open(tenantID: UUID, keyID: UUID, clientID: String, label: String?, ttlSeconds: Int?) async throws -> Session {
        try Validation.name(clientID, field: "clientId")
        if let label { try Validation.text(label, field: "label", maxLength: 200) }
        // The settings as they are now, not as cached: a lifetime an admin lowered through another
        // instance holds here at once, as does a revoked key.
        let settings = try await cache.settings(tenantID, answering: keyID).policy.policy.settings
        let ttl = ttlSeconds ?? settings.sessionTTLDefault
        guard ttl >= 1, ttl <= settings.sessionTTLMaximum else {
            throw CountersignError(.invalidTTL, "'ttlSeconds' must be between 1 and this tenant's maximum, \(settings.sessionTTLMaximum)")
        }
        return try await sessions.create(tenantID: tenantID, clientID: clientID, label: label, ttlSeconds: ttl, keyID: keyID)
    }

    public func get(tenantID: UUID, id: UUID) async throws -> Session {
        guard let session = try await sessions.get(tenantID: tenantID, id: id) else {
            throw CountersignError(.notFound, "no such session")
        }
        return session
    }

    public func invalidate(tenantID: UUID, id: UUID, mode: InvalidationMode) async throws -> Session {
        guard let session = try await sessions.invalidate(tenantID: tenantID, id: id, mode: mode) else {
            throw CountersignError(.notFound, "no such session")
        }
        cache.forgetSession(id)
        return session
    }

    /// What became of a submitted credential.
    public struct Submission: Sendable, Encodable {
        public var stored: Bool
        public var persistence: Persistence
        public var credentialId: UUID?
        public var created: Bool
    }

    /// Takes a credential the client obtained itself for `space`, if the tenant's policy lets
    /// clients keep credentials there with `persistence`.
    public func submit(
        tenantID: UUID,
        keyID: UUID,
        sessionID: UUID,
        space: ProtectionSpace,
        user: String,
        password: String,
        domain: String?,
        persistence: Persistence
    ) async throws -> Submission {
        try space.validate()
        // Unused here, but refused as a challenge's would be: a malformed space is the same 400
        // on every route that takes one.
        _ = try PresentedTLS.parse(space)
        try Validation.name(user, field: "user", maxLength: 1000)
        guard password.utf8.count <= 4096 else { throw CountersignError(.invalidField, "'password' is longer than 4096 bytes") }
        if let domain { try Validation.name(domain, field: "domain", maxLength: 256) }
        guard space.method.usesPassword else {
            throw CountersignError(.invalidField, "clients submit passwords only for password methods, not \(space.method.rawValue)")
        }
        let sessionState = try await cache.session(sessionID, tenantID: tenantID)
        // The policy as it is now: which persistences it allows is not left to a cached copy, nor
        // whether the key still counts.
        let tenant = try await cache.settings(tenantID, answering: keyID)
        // By the database's clock, which judges again when the credential is saved.
        guard sessionState.session.isActive(at: tenant.databaseNow) else {
            throw CountersignError(.sessionInvalidated, "the session is invalidated; open a new one")
        }
        let policy = tenant.policy.policy
        let allowed = policy.rule(for: space)?.then.allowedClientPersistences ?? RuleAction(disposition: .performDefaultHandling).allowedClientPersistences
        // `none` stores nothing, so no rule has anything to refuse: it is always accepted.
        guard persistence == .none || allowed.contains(persistence) else {
            throw CountersignError(
                .persistenceNotAllowed,
                "the policy lets clients submit credentials here with \(allowed.map(\.rawValue).joined(separator: ", ")) only"
            )
        }
        guard persistence != .none else {
            // Nothing is saved, so no save judges the session again by the database: read it
            // afresh, or a session invalidated through another instance (cached here as live)
            // would take the submission.
            let current = try await get(tenantID: tenantID, id: sessionID)
            guard current.invalidatedAt == nil else {
                cache.forgetSession(sessionID)
                throw CountersignError(.sessionInvalidated, "the session is invalidated; open a new one")
            }
            return Submission(stored: false, persistence: .none, credentialId: nil, created: false)
        }
        let saved = try await credentials.submit(
            tenantID: tenantID,
            session: sessionState.session,
            space: space,
            user: user,
            password: password,
            domain: domain,
            persistence: persistence
        )
        cache.forgetSession(sessionID)
        if persistence != .forSession { cache.forgetTenant(tenantID) }
        return Submission(stored: true, persistence: persistence, credentialId: saved.credential.id, created: saved.created)
    }
}
