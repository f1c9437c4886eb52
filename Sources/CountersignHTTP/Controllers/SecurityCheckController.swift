import CountersignCore
import CountersignService
import CountersignStorage
import Foundation
import Hummingbird
import Logging

/// MobileFirst-style security checks: clients forward challenge lists and report the server's
/// failures and successes; admins see where each client stands.
struct SecurityCheckController: Sendable {
    let securityChecks: SecurityCheckService
    let body: JSONBody

    /// A challenge list exactly as the server sent it: `{"challenges": {"PinCodeAttempts": {...}, "StepUp": null}}`.
    struct ChallengeList: Codable {
        var challenges: JSONValue

        enum CodingKeys: String, CodingKey { case challenges }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard container.contains(.challenges) else {
                throw CountersignError(.missingField, "'challenges' is required: send the challenge list as the server sent it")
            }
            challenges = try container.decode(JSONValue.self, forKey: .challenges)
        }
    }

    struct Answers: Encodable {
        var answers: [String: SecurityCheckAnswer]
    }

    struct ReportResponse: Encodable {
        var decision: DecisionEntry
        var applied: Bool
        var counter: DecisionController.OutcomeResponse.Counter?
        var state: SecurityCheckStateView?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(decision, forKey: .decision)
            try container.encode(applied, forKey: .applied)
            try container.encode(counter, forKey: .counter)
            try container.encode(state, forKey: .state)
        }

        enum CodingKeys: String, CodingKey { case decision, applied, counter, state }
    }

    struct StateReset: Codable {
        var clientId: String
        var securityCheck: String
    }

    func addClientRoutes(to group: RouterGroup<ClientRequestContext>) {
        group.post(":sessionId/security-checks") { request, context in
            let sessionID = try context.parameters.uuid("sessionId")
            let input = try await body.decode(ChallengeList.self, from: request)
            let challenges = try SecurityCheckChallenges(validating: input.challenges)
            let answers = try await securityChecks.answer(
                challenges,
                for: .init(tenantID: context.tenantID, sessionID: sessionID, keyID: context.key.id)
            )
            return try JSONResponse.make(Answers(answers: answers))
        }
        group.post(":sessionId/security-checks/:securityCheck/failure") { request, context in
            try await report(.rejected, request: request, context: context)
        }
        group.post(":sessionId/security-checks/:securityCheck/success") { request, context in
            try await report(.accepted, request: request, context: context)
        }
    }

    func addAdminRoutes(to group: RouterGroup<AdminRequestContext>) {
        group.get("states") { request, context in
            let query = try QueryParameters(request, accepting: QueryParameters.paging + ["clientId", "securityCheck"])
            let page = try query.page()
            let states = try await securityChecks.states(
                tenantID: context.tenantID,
                clientID: try query.checked("clientId") { try Validation.name($0, field: "clientId") },
                securityCheck: try query.checked("securityCheck") { try SecurityCheckName.validate($0, field: "securityCheck") },
                limit: page.limit,
                after: page.cursor
            )
            return try JSONResponse.make(ListPage("states", states))
        }
        group.post("states/reset") { request, context in
            let input = try await body.decode(StateReset.self, from: request)
            let state = try await securityChecks.reset(tenantID: context.tenantID, securityCheck: input.securityCheck, clientID: input.clientId)
            return try JSONResponse.make(state)
        }
    }

    private func report(_ outcome: Outcome, request: Request, context: ClientRequestContext) async throws -> Response {
        let sessionID = try context.parameters.uuid("sessionId")
        let name = context.parameters.get("securityCheck") ?? ""
        try SecurityCheckName.validate(name, field: "securityCheck")
        let decisionID = try QueryParameters(request, accepting: ["decisionId"]).uuid("decisionId")
        let payload = try await body.decode(JSONValue.self, from: request)
        let report = try await securityChecks.report(
            outcome,
            payload: payload,
            securityCheck: name,
            sessionID: sessionID,
            decisionID: decisionID,
            tenantID: context.tenantID,
            keyID: context.key.id
        )
        let counter = report.counter.map { state in
            DecisionController.OutcomeResponse.Counter(
                failures: state.failures,
                remainingAttempts: state.blockedUntil != nil ? 0 : state.maxFailures.map { max(0, $0 - state.failures) },
                blockedUntil: state.blockedUntil
            )
        }
        return try JSONResponse.make(ReportResponse(decision: report.decision, applied: report.applied, counter: counter, state: report.state))
    }
}
