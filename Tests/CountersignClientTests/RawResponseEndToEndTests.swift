import CountersignClient
import Foundation
import Testing

/// The CFHTTPAuthentication-style flow with nothing but the typed client: a real upstream that
/// demands Basic or Digest answers 401, the client forwards it to a real Countersign, sends the
/// header it gets back, and the upstream says 200. With a wrong stored password every further 401
/// forwarded for the task is a counted rejection, until the credential blocks.
@Suite("End to end: raw 401/403 responses through the typed client", .urlSessionSlot)
struct RawResponseEndToEndTests {
    static let account = "svc-raw"
    static let password = "correct horse: battery staple"

    /// A tenant whose policy releases `account`'s credential (stored with `password`) for the upstream.
    static func prepare(_ service: LiveCountersign, _ upstream: AuthUpstream, password: String, maxFailures: Int = 3) async throws -> AdminAPI.Tenant {
        let tenant = try await service.admin.tenant()
        _ = try await service.admin.credential(
            tenant,
            json: """
                {"host": "127.0.0.1", "port": \(upstream.port), "protocol": "http", "realm": "\(AuthUpstream.realm)",
                 "account": "\(account)", "password": "\(password)"}
                """
        )
        try await service.admin.policy(
            tenant,
            rules: """
                [{"id": "fleet-raw", "name": "Fleet raw responses", "match": {"host": "127.0.0.1", "port": \(upstream.port)},
                  "then": {"disposition": "useCredential", "account": "\(account)", "persistence": "forSession", "maxFailures": \(maxFailures)}}]
                """
        )
        return tenant
    }

    /// The upstream's answer to `path`, as the client forwards it.
    static func forward(_ reply: AuthUpstream.Reply, _ upstream: AuthUpstream, path: String, taskId: String, previousDecisionId: UUID? = nil) -> RawResponse {
        RawResponse(
            taskId: taskId,
            status: reply.status,
            headers: reply.headers.map { ResponseHeader($0.name, $0.value) },
            request: ForwardedRequest(method: "GET", url: upstream.baseURL + path),
            previousDecisionId: previousDecisionId
        )
    }

    @Test("the upstream's 401, forwarded, gives the header that opens it; a 403 after it is a refusal, not a rejection", arguments: AuthUpstream.Scheme.allCases)
    func headerOpensTheUpstream(scheme: AuthUpstream.Scheme) async throws {
        try await LiveCountersign.run { service in
            try await AuthUpstream.run(scheme, user: Self.account, password: Self.password) { upstream in
                let tenant = try await Self.prepare(service, upstream, password: Self.password)
                let client = CountersignClient(baseURL: service.baseURL, key: ClientKey(tenant.clientKey))
                let session = try await client.openSession(OpenSessionRequest(clientId: "raw-device", label: "raw e2e"))

                let challenged = try await upstream.get("/private")
                #expect(challenged.status == 401)
                let answer = try await client.answerRawResponse(Self.forward(challenged, upstream, path: "/private", taskId: "task-1"), in: session.id)
                #expect(answer.disposition == .useCredential)
                #expect(answer.reasonCode == .authorization)
                #expect(answer.rule?.id == "fleet-raw")
                #expect(answer.source == .policy)
                #expect(answer.credential == nil)
                #expect(answer.countedRejection == nil)
                #expect(answer.protectionSpace.host == "127.0.0.1" && answer.protectionSpace.port == upstream.port)
                #expect(answer.protectionSpace.realm == AuthUpstream.realm)
                #expect(answer.protectionSpace.authenticationMethod.rawValue == scheme.methodName)
                let header = try #require(answer.authorization)
                #expect(header.name == .authorization)
                switch scheme {
                case .basic:
                    #expect(header.value == "Basic " + Data("\(Self.account):\(Self.password)".utf8).base64EncodedString())
                    #expect(answer.challenges.map(\.status) == [.chosen])
                case .digest:
                    // MD5 came first; the service answers the stronger SHA-256, and the password stays home.
                    #expect(answer.challenges.map(\.status) == [.lowerPreference, .chosen])
                    #expect(answer.chosenChallenge?.mechanism == "Digest SHA-256")
                    #expect(header.value.hasPrefix("Digest ") && header.value.contains("algorithm=SHA-256"))
                    #expect(!header.value.contains(Self.password))
                }
                #expect(!"\(answer)".contains(header.value))

                let opened = try await upstream.get("/private", authorization: header.value)
                #expect(opened.status == 200, "\(upstream.log.refusals)")
                #expect(upstream.log.authorizations == [nil, header.value])
                let accepted = try await client.reportOutcome(OutcomeReport(outcome: .accepted, upstreamStatus: 200), for: answer.decisionId)
                #expect(accepted.decision.kind == "response")
                #expect(accepted.decision.outcome == .accepted)
                #expect(accepted.decision.taskId == "task-1")

                // Authenticated but not allowed: the 403 after the header is the server's refusal.
                let forbidden = try await upstream.get("/forbidden")
                #expect(forbidden.status == 401)
                let second = try await client.answerRawResponse(Self.forward(forbidden, upstream, path: "/forbidden", taskId: "task-2"), in: session.id)
                let secondHeader = try #require(second.authorization)
                let refusedReply = try await upstream.get("/forbidden", authorization: secondHeader.value)
                #expect(refusedReply.status == 403)
                let refusal = try await client.answerRawResponse(
                    Self.forward(refusedReply, upstream, path: "/forbidden", taskId: "task-2", previousDecisionId: second.decisionId),
                    in: session.id
                )
                #expect(refusal.disposition == .cancelAuthenticationChallenge)
                #expect(refusal.reasonCode == .serverRefused)
                #expect(refusal.source == .serverResponse)
                #expect(refusal.authorization == nil)
                #expect(refusal.challenges.isEmpty)
                #expect(upstream.log.refusals.isEmpty, "\(upstream.log.refusals)")

                let recorded = try await service.admin.decisions(tenant, sessionId: session.id)
                let released = try #require(recorded.first { ($0["id"] as? String).flatMap(UUID.init(uuidString:)) == second.decisionId })
                #expect(released["outcome"] as? String == "refused")
                #expect(released["outcomeSource"] as? String == "response")
                #expect(recorded.allSatisfy { $0["kind"] as? String == "response" })
                #expect(!String(describing: recorded).contains(Self.password))
                // Neither the success nor the refusal counts against the credential.
                let counters = try await service.admin.counters(tenant)
                #expect(counters.allSatisfy { $0["failures"] as? Int == 0 }, "\(counters)")

                let ended = try await client.invalidateSession(session.id, mode: .finishTasks)
                #expect(ended.state == .invalidated)
                do throws(CountersignClientError) {
                    _ = try await client.answerRawResponse(Self.forward(challenged, upstream, path: "/private", taskId: "task-3"), in: session.id)
                    Issue.record("answered in an invalidated session")
                } catch {
                    #expect(error.serviceCode == CountersignClientError.Code.sessionInvalidated)
                }
            }
        }
    }

    @Test("a wrong stored password: each further 401 forwarded for the task is a counted rejection, the last one blocks", arguments: AuthUpstream.Scheme.allCases)
    func wrongPasswordIsCounted(scheme: AuthUpstream.Scheme) async throws {
        try await LiveCountersign.run { service in
            try await AuthUpstream.run(scheme, user: Self.account, password: Self.password) { upstream in
                let tenant = try await Self.prepare(service, upstream, password: "last year's password", maxFailures: 2)
                let client = CountersignClient(baseURL: service.baseURL, key: ClientKey(tenant.clientKey))
                let session = try await client.openSession(OpenSessionRequest(clientId: "raw-device"))

                var reply = try await upstream.get("/private")
                let first = try await client.answerRawResponse(Self.forward(reply, upstream, path: "/private", taskId: "task-1"), in: session.id)
                #expect(first.disposition == .useCredential)
                #expect(first.remainingAttempts == 2)
                reply = try await upstream.get("/private", authorization: try #require(first.authorization).value)
                #expect(reply.status == 401)

                // The second 401 for the task: the rejection of the first header, counted once.
                let second = try await client.answerRawResponse(Self.forward(reply, upstream, path: "/private", taskId: "task-1"), in: session.id)
                #expect(second.countedRejection == first.decisionId)
                #expect(second.disposition == .useCredential)
                #expect(second.reasonCode == .authorization)
                #expect(second.remainingAttempts == 1)
                var counter = try #require(try await service.admin.counters(tenant).only)
                #expect(counter["failures"] as? Int == 1, "\(counter)")
                #expect(!(counter["blockedUntil"] is String))

                reply = try await upstream.get("/private", authorization: try #require(second.authorization).value)
                #expect(reply.status == 401)
                let blocked = try await client.answerRawResponse(Self.forward(reply, upstream, path: "/private", taskId: "task-1"), in: session.id)
                #expect(blocked.countedRejection == second.decisionId)
                #expect(blocked.disposition == .cancelAuthenticationChallenge)
                #expect(blocked.reasonCode == .credentialBlocked)
                #expect(blocked.authorization == nil)
                #expect(blocked.remainingAttempts == 0)
                #expect(blocked.blockedUntil != nil)

                counter = try #require(try await service.admin.counters(tenant).only)
                #expect(counter["failures"] as? Int == 2)
                #expect(counter["totalRejections"] as? Int == 2)
                #expect(counter["blockedUntil"] is String)
                let clients = counter["clients"] as? [[String: Any]]
                #expect(clients?.only?["clientId"] as? String == "raw-device")
                #expect(clients?.only?["rejections"] as? Int == 2)

                // The upstream saw the request without a header, then the two released headers.
                #expect(upstream.log.authorizations.count == 3)
                #expect(upstream.log.authorizations.first == .some(nil))
                if scheme == .digest {
                    // Well-formed, fresh, for the right user and uri: only the password was wrong.
                    #expect(upstream.log.refusals == ["wrong response hash", "wrong response hash"])
                    #expect(!upstream.log.authorizations.contains { $0?.contains("last year's password") == true })
                }

                let recorded = try await service.admin.decisions(tenant, sessionId: session.id)
                let rejected = recorded.filter { $0["outcome"] as? String == "rejected" }
                #expect(Set(rejected.compactMap { ($0["id"] as? String).flatMap(UUID.init(uuidString:)) }) == [first.decisionId, second.decisionId])
                #expect(rejected.allSatisfy { $0["outcomeSource"] as? String == "response" && $0["countedRejection"] as? Bool == true })
            }
        }
    }
}
