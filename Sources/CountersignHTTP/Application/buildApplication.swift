import CountersignCore
import CountersignCrypto
import CountersignPostgres
import CountersignService
import CountersignStorage
public import Hummingbird
public import Logging
import Metrics
import NIOPosix
import ServiceLifecycle

/// Builds the Countersign service: the HTTP server, its routes, and the database pool it
/// owns, all in one `ServiceGroup` so that SIGTERM drains HTTP first and closes the pool after.
///
/// Pending migrations are applied before the server accepts requests unless
/// `configuration.migrateAtStart` is false.
public func buildApplication(_ configuration: ServiceConfiguration, logger: Logger) throws -> some ApplicationProtocol {
    let registry = Observability.registry
    Gauge(label: "countersign_build_info", dimensions: [("version", Release.version)]).record(1)
    let migrationFiles = try SchemaVersion.migrations(in: configuration.migrationsDirectory)
    logger.info("countersign \(Release.version)", metadata: ["schema.required": "\(SchemaVersion.required)"])
    let migrations = MigrationRunner(migrations: migrationFiles)
    let pool = PostgresPool(configuration: configuration.database, logger: logger)

    // Every GET route answers HEAD too (RFC 9110 §9.3.2), as load balancers' probes expect.
    let router = Router(context: AppRequestContext.self, options: .autoGenerateHeadEndpoints)
    let requestMetrics = RequestMetrics()
    router.add(middleware: RequestObservationMiddleware(metrics: requestMetrics))
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: CanonicalPathMiddleware())

    let vault = SecretVault(masterKey: configuration.masterKey, pool: pool)
    let readiness = Readiness(
        pool: pool,
        expectedSchemaVersion: migrationFiles.map(\.version).max() ?? 0,
        cacheTTL: configuration.readinessCacheTTL,
        hasMasterKey: configuration.masterKey != nil,
        logger: logger,
        masterKeyMatchesDatabase: { try await vault.masterKeyMatchesDatabase() }
    )
    HealthController(readiness: readiness, metrics: registry).addRoutes(to: router)

    let body = JSONBody(limit: configuration.maxBodyBytes)
    let tenants = TenantStore(pool: pool)
    let keys = APIKeyStore(pool: pool)
    // Key reads take at most half the connections the decision writers leave.
    let keyLookups = KeyLookups(limit: max(1, (configuration.database.poolSize - configuration.decisionWriters) / 2), maxWaiting: 256) {
        try await keys.find(lookupID: $0)
    }
    let authenticator = APIKeyAuthenticator(lookups: keyLookups, operatorKey: configuration.operatorKey, ttl: configuration.apiKeyCacheTTL)

    let credentials = CredentialStore(pool: pool, vault: vault)
    let identities = IdentityStore(pool: pool, vault: vault)
    let sessionStore = SessionStore(pool: pool)
    let decisionStore = DecisionStore(pool: pool)
    let cache = DecisionStateCache(store: DecisionStateStore(pool: pool))
    let secrets = SecretCache(store: credentials)
    let openedIdentities = IdentityCache(store: identities)
    let writer = DecisionWriter(pool: pool, logger: logger, maximumWriters: configuration.decisionWriters)
    let decisions = DecisionService(
        cache: cache,
        secrets: secrets,
        writer: writer,
        decisions: decisionStore,
        logger: logger,
        identities: openedIdentities
    )
    let securityChecks = SecurityCheckService(cache: cache, secrets: secrets, writer: writer, store: SecurityCheckStore(pool: pool), logger: logger)
    let sessions = SessionService(sessions: sessionStore, credentials: credentials, cache: cache)
    let nonceCounts = DigestNonceCountStore(pool: pool)
    let responses = RawResponseService(decisions: decisions, store: decisionStore, nonceCounts: nonceCounts)

    let v1 = router.group("v1")
        .add(middleware: AuthenticationMiddleware(authenticator: authenticator))
        .add(middleware: UndeclaredQueryMiddleware())
    TenantController(tenants: tenants, keys: keys, authenticator: authenticator, body: body)
        .addRoutes(to: v1.group("tenants", context: OperatorRequestContext.self))
    APIKeyController(keys: keys, authenticator: authenticator, body: body)
        .addRoutes(to: v1.group("keys", context: AdminRequestContext.self))
    let boundClient = BoundClientMiddleware(cache: cache, decisions: decisionStore)
    SessionController(sessions: sessions, decisions: decisions, body: body)
        .addRoutes(to: v1.group("sessions", context: ClientRequestContext.self).add(middleware: boundClient))
    ResponseController(responses: responses, body: body)
        .addRoutes(to: v1.group("sessions", context: ClientRequestContext.self).add(middleware: boundClient))
    let decisionController = DecisionController(decisions: decisions, store: decisionStore, body: body)
    decisionController.addClientRoutes(to: v1.group("decisions", context: ClientRequestContext.self).add(middleware: boundClient))
    decisionController.addAdminRoutes(to: v1.group("decisions", context: AdminRequestContext.self))
    CredentialController(credentials: credentials, cache: cache, body: body)
        .addRoutes(to: v1.group("credentials", context: AdminRequestContext.self))
    IdentityController(identities: identities, cache: cache, body: body)
        .addRoutes(to: v1.group("identities", context: AdminRequestContext.self))
    PolicyController(policies: PolicyStore(pool: pool), decisions: decisions, cache: cache, body: body)
        .addRoutes(to: v1.group("policy", context: AdminRequestContext.self))
    CounterController(counters: CounterStore(pool: pool), cache: cache)
        .addRoutes(to: v1.group("counters", context: AdminRequestContext.self))
    let securityCheckController = SecurityCheckController(securityChecks: securityChecks, body: body)
    securityCheckController.addClientRoutes(to: v1.group("sessions", context: ClientRequestContext.self).add(middleware: boundClient))
    securityCheckController.addAdminRoutes(to: v1.group("security-checks", context: AdminRequestContext.self))
    router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))

    let accessChanges = PostgresListener(configuration: configuration.database, channel: AccessChange.channel, logger: logger) {
        [authenticator, cache] event in
        switch event {
        case .listening:
            // Announcements made while nobody listened are lost: a key revoked, or a tenant
            // switched off, meanwhile.
            authenticator.forgetAll()
            cache.forgetAllTenants()
        case .notification(let payload):
            switch AccessChange(payload: payload) {
            case .keyRevoked(let id):
                authenticator.forget(keyID: id)
            case .tenantSwitched(let id):
                authenticator.forget(tenantID: id)
                cache.forgetTenant(id)
            case nil:
                break
            }
        }
    }
    var services: [any Service] = [
        pool,
        accessChanges,
        PeriodicSweep.expiredSessions(sessionStore, every: configuration.sessionSweepInterval, logger: logger),
        PeriodicSweep.staleNonceCounts(nonceCounts, logger: logger),
        PeriodicSweep.credentialRemovals(credentials, logger: logger),
        PeriodicSweep.openedSecrets(secrets, openedIdentities, logger: logger),
    ]
    if let retention = configuration.retention {
        services.append(PeriodicSweep.retention(decisions: decisionStore, sessions: sessionStore, keptFor: retention, logger: logger))
    }
    let migrationsAtStart = configuration.migrateAtStart ? MigrationsAtStart(migrations: migrations, pool: pool, logger: logger) : nil
    if let migrationsAtStart { services.append(migrationsAtStart) }
    services.append(ShutdownNotice(logger: logger, watchesSignals: configuration.announcesShutdownSignals))
    var app = Application(
        router: router,
        // A connection that sends nothing for a minute is closed: idle and half-sent requests
        // must not hold file descriptors for ever where no proxy stands in front.
        server: .http1(
            configuration: .init(
                additionalChannelHandlers: [HTTPGuardHandler(logger: logger, maxBodyBytes: configuration.maxBodyBytes, metrics: requestMetrics)],
                idleTimeout: .seconds(60)
            )
        ),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "countersign"),
        services: services,
        logger: logger
    )
    if let migrationsAtStart {
        app.beforeServerStarts { try await migrationsAtStart.applyBeforeServing() }
    } else {
        app.beforeServerStarts {
            // Without the database the service still starts (and /readyz says why it is not ready).
            guard let pending = try? await migrations.pendingMigrations(on: pool), let first = pending.first else { return }
            logger.warning(
                "the database schema lacks migrations this build needs; requests fail with database_unavailable until `countersign migrate` applies them",
                metadata: ["migration.pending": "\(pending.count)", "migration.version": "\(first.version)"]
            )
        }
    }
    app.beforeServerStarts {
        let anchors = try await NIOThreadPool.singleton.runIfActive { TrustEvaluator.loadSystemAnchors() }
        logger.debug("system trust anchors read", metadata: ["anchors": "\(anchors)"])
    }
    app.beforeServerStarts {
        // A wrong master key would otherwise pass readiness and fail every release of a secret.
        // Without the database (or its migrations) the service still starts, unready.
        if (try? await vault.masterKeyMatchesDatabase()) == false {
            throw CountersignError(.secretUnreadable, Readiness.masterKeyMismatch(hasMasterKey: configuration.masterKey != nil))
        }
    }
    return app
}
