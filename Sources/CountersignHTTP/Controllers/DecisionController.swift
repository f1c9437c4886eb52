import CountersignCore
import CountersignService
import CountersignStorage
import Foundation
import Hummingbird
import Logging

/// Outcome reports (clients) and the decision audit (admins).
struct DecisionController: Sendable {
    let decisions: DecisionService
    let store: DecisionStore
    let body: JSONBody

    struct ReportOutcome: Codable {
        var outcome: Outcome
        var upstreamStatus: Int?
    }

    struct OutcomeResponse: Encodable {
        struct Counter: Encodable {
            var failures: Int
            var remainingAttempts: Int?
            var blockedUntil: Date?

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(failures, forKey: .failures)
                try container.encode(remainingAttempts, forKey: .remainingAttempts)
                try container.encode(blockedUntil, forKey: .blockedUntil)
            }

            enum CodingKeys: String, CodingKey { case failures, remainingAttempts, blockedUntil }
        }

        var decision: DecisionEntry
        /// This report counted a rejection; false when the outcome was already known.
        var counted: Bool
        var counter: Counter?
        /// For a `refused` outcome (a 403 after the credential): what to do now, which is to stop.
        var disposition: Disposition?
        var reasonCode: ResponseReasonCode?
    }

    func addClientRoutes(to group: RouterGroup<ClientRequestContext>) {
        group.post(":decisionId/outcome") { request, context in
            let decisionID = try context.parameters.uuid("decisionId")
            let input = try await body.decode(ReportOutcome.self, from: request)
            if let status = input.upstreamStatus { try Validation.range(status, 100...599, field: "upstreamStatus") }
            let result = try await decisions.reportOutcome(input.outcome, upstreamStatus: input.upstreamStatus, decisionID: decisionID, tenantID: context.tenantID, keyID: context.key.id)
            let counter = result.counter.map { state in
                OutcomeResponse.Counter(
                    failures: state.failures,
                    remainingAttempts: state.blockedUntil != nil ? 0 : state.maxFailures.map { max(0, $0 - state.failures) },
                    blockedUntil: state.blockedUntil
                )
            }
            let refused = result.decision.outcome == .refused
            return try JSONResponse.make(
                OutcomeResponse(
                    decision: result.decision,
                    counted: result.counted,
                    counter: counter,
                    disposition: refused ? .cancelAuthenticationChallenge : nil,
                    reasonCode: refused ? .serverRefused : nil
                )
            )
        }
    }

    func addAdminRoutes(to group: RouterGroup<AdminRequestContext>) {
        group.get { request, context in
            let query = try QueryParameters(request, accepting: QueryParameters.paging + ["sessionId", "clientId", "credentialId", "disposition", "since", "until"])
            let filter = DecisionStore.Filter(
                sessionID: try query.uuid("sessionId"),
                clientID: try query.checked("clientId") { try Validation.name($0, field: "clientId") },
                credentialID: try query.uuid("credentialId"),
                disposition: try query.enumeration("disposition", as: Disposition.self),
                since: try query.date("since"),
                until: try query.date("until")
            )
            // Times closer than the microseconds decisions are kept to read as one: compared as
            // the database is sent them, rounded to the microsecond.
            let microseconds = { (date: Date) in (date.timeIntervalSince1970 * 1_000_000).rounded() }
            if let since = filter.since, let until = filter.until, microseconds(since) >= microseconds(until) {
                throw CountersignError(.invalidQuery, "'until' must be at least a microsecond after 'since' (times are kept to the microsecond)")
            }
            let page = try query.page()
            return try JSONResponse.make(
                ListPage("decisions", try await store.list(tenantID: context.tenantID, filter: filter, limit: page.limit, after: page.cursor))
            )
        }
        group.get(":decisionId") { _, context in
            guard let decision = try await store.get(tenantID: context.tenantID, id: try context.parameters.uuid("decisionId")) else {
                throw CountersignError(.notFound, "no such decision")
            }
            return try JSONResponse.make(decision)
        }
    }
}
