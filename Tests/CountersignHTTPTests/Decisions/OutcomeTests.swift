import Foundation
import Testing

@Suite("Outcomes")
struct OutcomeTests {
    static func counter(_ reply: Reply) -> [String: Any]? { reply["counter"] as? [String: Any] }

    @Test func theSameReportTwiceCountsOnceAndAConflictingOneIs409() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 5"#)
            let session = try await api.session(tenant)
            let decision = try #require(try await api.decided(tenant, session: session).string("decisionId"))

            let first = try await api.outcome(tenant, decision: decision, "rejected", upstreamStatus: 401)
            #expect(first.status == 200)
            #expect(first["counted"] as? Bool == true)
            #expect(Self.counter(first)?["failures"] as? Int == 1)
            #expect(Self.counter(first)?["remainingAttempts"] as? Int == 4)
            let record = try #require(first["decision"] as? [String: Any])
            #expect(record["outcome"] as? String == "rejected")
            #expect(record["outcomeStatus"] as? Int == 401)
            #expect(record["outcomeSource"] as? String == "report")
            #expect(record["countedRejection"] as? Bool == true)

            let again = try await api.outcome(tenant, decision: decision, "rejected", upstreamStatus: 401)
            #expect(again.status == 200)
            #expect(again["counted"] as? Bool == false)
            for other in ["accepted", "cancelled"] {
                let conflict = try await api.outcome(tenant, decision: decision, other)
                #expect(conflict.status == 409)
                #expect(conflict.errorCode == "outcome_conflict")
            }
            let counters = try await api.counters(tenant)
            #expect(counters.count == 1)
            #expect(counters.first?["failures"] as? Int == 1)
            #expect(counters.first?["totalRejections"] as? Int == 1)
        }
    }

    @Test func rejectionsOfAReplacedPasswordNeitherCountNorBlockTheNewOne() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 2, "persistence": "none""#)
            // Devices given the old password, one session each, and one more given it from a session's memory.
            var stale: [String] = []
            for device in 0..<3 {
                let session = try await api.session(tenant, clientId: "device-\(device)")
                stale.append(try #require(try await api.decided(tenant, session: session).string("decisionId")))
            }
            let retrying = try await api.session(tenant, clientId: "device-retrying")
            _ = try await api.decided(tenant, session: retrying)

            let patched = try await api.call(.patch, "/v1/credentials/\(credential)", key: tenant.adminKey, json: ["password": "changed"])
            #expect(patched.status == 200)

            // Their late reports are recorded, and count nothing.
            for decision in stale {
                let reply = try await api.outcome(tenant, decision: decision, "rejected", upstreamStatus: 401)
                #expect(reply.status == 200)
                #expect(reply["counted"] as? Bool == false)
                #expect(Self.counter(reply) == nil)
                #expect((reply["decision"] as? [String: Any])?["outcome"] as? String == "rejected")
            }
            // Nor does a retry naming the user, which rejects the decision made before the change.
            let retry = try await api.decide(
                tenant, session: retrying,
                ChallengeBody(proposedCredential: .init(user: "svc", hasPassword: true), previousFailureCount: 1, failureResponse: .init(status: 401))
            )
            #expect(retry.status == 200)
            #expect(retry.string("disposition") == "useCredential")
            #expect(retry.credentialPassword == "changed")
            #expect(retry.string("countedRejection") == nil)
            #expect(try await api.counters(tenant).allSatisfy { $0["failures"] as? Int == 0 && $0["blockedUntil"] is NSNull })

            // The new password is still released, and its own rejections count and block it.
            let session = try await api.session(tenant, clientId: "device-new")
            let fresh = try await api.decided(tenant, session: session)
            #expect(fresh.credentialPassword == "changed")
            let counted = try await api.outcome(tenant, decision: try #require(fresh.string("decisionId")), "rejected", upstreamStatus: 401)
            #expect(counted["counted"] as? Bool == true)
            #expect(Self.counter(counted)?["failures"] as? Int == 1)
        }
    }

    @Test(arguments: [Method.ntlm, Method.negotiate])
    func aHandshakeFailingOnAnotherTaskRejectsTheSessionsAnswer(method: String) async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant, account: "svc", extra: ["domain": "CORP"])
            try await api.releasePolicy(tenant, then: #""maxFailures": 5"#)
            let session = try await api.session(tenant)
            let space = Space.basic.with { $0.authenticationMethod = method; $0.realm = nil }
            let answered = try await api.decided(tenant, session: session, taskId: "task-1", space: space)
            let answer = try #require(answered.string("decisionId"))

            // The client handshakes on a new connection, opened for another task, and fails.
            let failed = try await api.decide(
                tenant, session: session,
                ChallengeBody(
                    taskId: "task-2", protectionSpace: space, proposedCredential: .init(user: "svc", hasPassword: true),
                    previousFailureCount: 1, failureResponse: .init(status: 401)
                )
            )
            #expect(failed.status == 200)
            #expect(failed.string("countedRejection") == answer)
            #expect(failed.string("source") == "policy", "the rejected credential is no longer the session's answer")
            #expect(try await api.decisionRecord(tenant, answer).string("outcomeSource") == "retry")
            #expect(try await api.counters(tenant).first?["failures"] as? Int == 1)
        }
    }

    /// The copy of a handshake's failure forwarded twice must not reject another task's release:
    /// the retrying task's own decision answered it already.
    @Test(arguments: [Method.ntlm, Method.negotiate])
    func aHandshakeFailureForwardedTwiceCountsOnce(method: String) async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant, account: "svc", extra: ["domain": "CORP"])
            try await api.releasePolicy(tenant, then: #""maxFailures": 5"#)
            let session = try await api.session(tenant)
            let space = Space.basic.with { $0.authenticationMethod = method; $0.realm = nil }
            _ = try await api.decided(tenant, session: session, taskId: "task-1", space: space)
            let third = try #require(try await api.decided(tenant, session: session, taskId: "task-3", space: space).string("decisionId"))
            let failure = ChallengeBody(
                taskId: "task-2", protectionSpace: space, proposedCredential: .init(user: "svc", hasPassword: true),
                previousFailureCount: 1, failureResponse: .init(status: 401)
            )
            #expect(try await api.decide(tenant, session: session, failure).string("countedRejection") == third)
            let copy = try await api.decide(tenant, session: session, failure)
            #expect(copy.status == 200 && copy["countedRejection"] is NSNull, "\(copy)")
            #expect(try await api.counters(tenant).first?["failures"] as? Int == 1)
        }
    }

    @Test(arguments: [Method.ntlm, Method.negotiate])
    func aHandshakeRetryNamesTheReleasedAccountInAnyWindowsForm(method: String) async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, account: "svc", extra: ["domain": "CORP"])
            try await api.releasePolicy(tenant, then: #""maxFailures": 50"#)
            let space = Space.basic.with { $0.authenticationMethod = method; $0.realm = nil }
            func retryCounts(_ user: String) async throws -> Bool {
                let session = try await api.session(tenant)
                let answer = try #require(try await api.decided(tenant, session: session, space: space).string("decisionId"))
                let retry = try await api.decide(
                    tenant, session: session,
                    ChallengeBody(
                        protectionSpace: space, proposedCredential: .init(user: user, hasPassword: true), previousFailureCount: 1,
                        failureResponse: .init(status: 401)
                    )
                )
                try #require(retry.status == 200, "\(retry)")
                let counted = retry.string("countedRejection")
                #expect(counted == nil || counted == answer)
                return counted != nil
            }
            // The client's SDK hands URLSession `DOMAIN\user`; an app may use the UPN (with the DNS
            // domain, whose first label is the NetBIOS one), in any case.
            for user in ["CORP\\svc", "corp\\SVC", "svc@corp", "SVC@Corp", "Svc", "svc@corp.example.com"] {
                #expect(try await retryCounts(user), "\(user)")
            }
            for user in ["OTHER\\svc", "svc@other.example", "CORP\\someone", "someone@CORP", "CORP\\"] {
                #expect(try await !retryCounts(user), "\(user)")
            }
            // A credential without a domain is named with any.
            #expect(try await api.call(.patch, "/v1/credentials/\(credential)", key: tenant.adminKey, json: #"{"domain": null}"#).status == 200)
            #expect(try await retryCounts("ANY\\svc"))
            #expect(try await api.counters(tenant).first?["totalRejections"] as? Int == 7)
        }
    }

    @Test func retriesOfOtherMethodsNameTheReleasedUserExactly() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant, account: "svc", extra: ["domain": "CORP"])
            try await api.releasePolicy(tenant, then: #""maxFailures": 5, "persistence": "none""#)
            let session = try await api.session(tenant)
            _ = try await api.decided(tenant, session: session)
            for user in ["SVC", "CORP\\svc", "svc@CORP"] {
                let retry = try await api.decide(
                    tenant, session: session, ChallengeBody(proposedCredential: .init(user: user, hasPassword: true), previousFailureCount: 1)
                )
                #expect(retry["countedRejection"] is NSNull, "\(user)")
            }
            #expect(try await api.counters(tenant).isEmpty)
        }
    }

    @Test(arguments: [Method.ntlm, Method.negotiate])
    func aHandshakeRetryRejectsAnAnswerStillWithoutOutcomeItsOwnTasksFirst(method: String) async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant, account: "svc", extra: ["domain": "CORP"])
            try await api.releasePolicy(tenant, then: #""maxFailures": 50"#)
            let space = Space.basic.with { $0.authenticationMethod = method; $0.realm = nil }
            func retry(_ session: String, task: String) async throws -> String? {
                let reply = try await api.decide(
                    tenant, session: session,
                    ChallengeBody(
                        taskId: task, protectionSpace: space, proposedCredential: .init(user: "svc", hasPassword: true), previousFailureCount: 1,
                        failureResponse: .init(status: 401)
                    )
                )
                try #require(reply.status == 200, "\(reply)")
                return reply.string("countedRejection")
            }

            // The newest answer's task went through: the handshake that failed used an earlier one.
            let session = try await api.session(tenant)
            let first = try #require(try await api.decided(tenant, session: session, taskId: "task-1", space: space).string("decisionId"))
            let second = try #require(try await api.decided(tenant, session: session, taskId: "task-2", space: space).string("decisionId"))
            #expect(try await api.outcome(tenant, decision: second, "accepted", upstreamStatus: 200).status == 200)
            #expect(try await retry(session, task: "task-3") == first)

            // A retry on a task that was answered rejects that task's answer, not the newest.
            let other = try await api.session(tenant)
            let own = try #require(try await api.decided(tenant, session: other, taskId: "task-1", space: space).string("decisionId"))
            let newest = try #require(try await api.decided(tenant, session: other, taskId: "task-2", space: space).string("decisionId"))
            #expect(try await retry(other, task: "task-1") == own)
            #expect(try await api.decisionRecord(tenant, newest)["outcome"] is NSNull)

            // A retry on a task whose answer was judged already counts nothing more: it does not
            // pass on to another task's answer still open.
            let third = try await api.session(tenant)
            let judged = try #require(try await api.decided(tenant, session: third, taskId: "task-1", space: space).string("decisionId"))
            let open = try #require(try await api.decided(tenant, session: third, taskId: "task-2", space: space).string("decisionId"))
            #expect(try await api.outcome(tenant, decision: judged, "rejected", upstreamStatus: 401).status == 200)
            #expect(try await retry(third, task: "task-1") == nil)
            #expect(try await api.decisionRecord(tenant, open)["outcome"] is NSNull)
        }
    }

    @Test func concurrentRepeatsOfOneReportCountOnce() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 50"#)
            let session = try await api.session(tenant)
            let decision = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            let counted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await api.outcome(tenant, decision: decision, "rejected")["counted"] as? Bool ?? false }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(counted == 1)
            #expect(try await api.counters(tenant).first?["totalRejections"] as? Int == 1)
        }
    }

    @Test func aRetryNamingTheReleasedUserIsTheRejectionCountedOnce() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 5, "persistence": "none""#)
            let session = try await api.session(tenant)
            let first = try #require(try await api.decided(tenant, session: session).string("decisionId"))

            let retry = try await api.decide(
                tenant, session: session,
                ChallengeBody(proposedCredential: .init(user: "svc", hasPassword: true), previousFailureCount: 1, failureResponse: .init(status: 401))
            )
            #expect(retry.status == 200)
            #expect(retry.string("countedRejection") == first)
            #expect(retry.int("remainingAttempts") == 4)
            let record = try await api.decisionRecord(tenant, first)
            #expect(record.string("outcome") == "rejected")
            #expect(record.string("outcomeSource") == "retry")
            #expect(record.int("outcomeStatus") == 401)

            // The client also reports it: counted already, not again.
            let explicit = try await api.outcome(tenant, decision: first, "rejected", upstreamStatus: 401)
            #expect(explicit.status == 200)
            #expect(explicit["counted"] as? Bool == false)
            #expect(try await api.counters(tenant).first?["totalRejections"] as? Int == 1)

            // The retry's own release is the next one a retry rejects.
            let second = try #require(retry.string("decisionId"))
            let retryAgain = try await api.decide(
                tenant, session: session, ChallengeBody(proposedCredential: .init(user: "svc", hasPassword: true), previousFailureCount: 2)
            )
            #expect(retryAgain.string("countedRejection") == second)
            #expect(try await api.counters(tenant).first?["totalRejections"] as? Int == 2)
        }
    }

    /// A client (or a proxy in front of the service) that sends one retry twice must not count
    /// the release made for the first copy, which the client has not tried yet.
    @Test func theSameRetryForwardedTwiceCountsOnce() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 5, "persistence": "none""#)
            let session = try await api.session(tenant)
            let first = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            let body = ChallengeBody(proposedCredential: .init(user: "svc", hasPassword: true), previousFailureCount: 1, failureResponse: .init(status: 401))
            let retry = try await api.decide(tenant, session: session, body)
            #expect(retry.string("countedRejection") == first)
            let copy = try await api.decide(tenant, session: session, body)
            #expect(copy.status == 200)
            #expect(copy["countedRejection"] is NSNull, "\(copy)")
            #expect(copy.int("remainingAttempts") == 4)
            #expect(try await api.decisionRecord(tenant, try #require(retry.string("decisionId")))["outcome"] is NSNull)
            #expect(try await api.counters(tenant).first?["totalRejections"] as? Int == 1)

            // The next attempt's failure rejects the latest release.
            let next = try await api.decide(tenant, session: session, ChallengeBody(proposedCredential: .init(user: "svc", hasPassword: true), previousFailureCount: 2))
            #expect(next.string("countedRejection") == copy.string("decisionId"))
            #expect(try await api.counters(tenant).first?["totalRejections"] as? Int == 2)
        }
    }

    @Test func anExplicitReportFirstMakesTheRetryCountNothing() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 5, "persistence": "none""#)
            let session = try await api.session(tenant)
            let first = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            #expect(try await api.outcome(tenant, decision: first, "rejected", upstreamStatus: 401)["counted"] as? Bool == true)
            let retry = try await api.decide(
                tenant, session: session, ChallengeBody(proposedCredential: .init(user: "svc", hasPassword: true), previousFailureCount: 1)
            )
            #expect(retry["countedRejection"] is NSNull)
            #expect(retry.int("remainingAttempts") == 4)
            #expect(try await api.counters(tenant).first?["totalRejections"] as? Int == 1)
        }
    }

    @Test func retriesThatDoNotNameTheReleaseCountNothing() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 5, "persistence": "none""#)
            let session = try await api.session(tenant)
            _ = try await api.decided(tenant, session: session)
            let bodies = [
                ChallengeBody(proposedCredential: .init(user: "someone-else"), previousFailureCount: 1),
                ChallengeBody(taskId: "another-task", proposedCredential: .init(user: "svc"), previousFailureCount: 1),
                ChallengeBody(proposedCredential: .init(user: "svc"), previousFailureCount: 0),
                ChallengeBody(previousFailureCount: 1),
                ChallengeBody(protectionSpace: Space.basic.with { $0.realm = "Other" }, proposedCredential: .init(user: "svc"), previousFailureCount: 1),
            ]
            for body in bodies {
                let reply = try await api.decide(tenant, session: session, body)
                #expect(reply.status == 200)
                #expect(reply["countedRejection"] is NSNull, "\(body)")
            }
            #expect(try await api.counters(tenant).isEmpty)
        }
    }

    @Test func theCredentialBlocksAtMaxFailures() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credentialID = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 2, "persistence": "none", "blockedDisposition": "rejectProtectionSpace""#)
            let session = try await api.session(tenant)
            let first = try await api.decided(tenant, session: session)
            #expect(first.int("remainingAttempts") == 2)
            let one = try await api.outcome(tenant, decision: try #require(first.string("decisionId")), "rejected", upstreamStatus: 401)
            #expect(Self.counter(one)?["blockedUntil"] is NSNull)
            let second = try await api.decided(tenant, session: session, taskId: "task-2")
            #expect(second.int("remainingAttempts") == 1)
            let two = try await api.outcome(tenant, decision: try #require(second.string("decisionId")), "rejected", upstreamStatus: 401)
            #expect(Self.counter(two)?["failures"] as? Int == 2)
            #expect(Self.counter(two)?["remainingAttempts"] as? Int == 0)
            #expect(Self.counter(two)?["blockedUntil"] as? String != nil)

            let blocked = try await api.decided(tenant, session: session, taskId: "task-3")
            #expect(blocked.string("disposition") == "rejectProtectionSpace")
            #expect(blocked["credential"] is NSNull)
            #expect(blocked.int("remainingAttempts") == 0)
            #expect(blocked.string("blockedUntil") == Self.counter(two)?["blockedUntil"] as? String)
            #expect(!blocked.text.contains("s3cret"))
            // Every session, every client.
            let other = try await api.session(tenant, clientId: "device-2")
            #expect(try await api.decided(tenant, session: other).string("disposition") == "rejectProtectionSpace")

            let events = try await api.history(tenant, credential: credentialID).compactMap { $0["event"] as? String }
            #expect(events.filter { $0 == "blocked" }.count == 1)
        }
    }

    @Test func blocksGrowPerRepeatedBlock() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            // A first block of 10 s: long enough for a loaded machine to see it (a whole parallel
            // run has taken more than 4 s between two requests), short enough to wait out.
            try await api.releasePolicy(tenant, then: #""maxFailures": 1, "persistence": "none", "blockSeconds": 10, "blockIncrementSeconds": 100, "maxBlockSeconds": 150"#)
            let session = try await api.session(tenant)
            let first = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            let rejected = try await api.outcome(tenant, decision: first, "rejected")
            #expect(try await api.decided(tenant, session: session).string("disposition") == "cancelAuthenticationChallenge")
            let firstUntil = try SessionTests.date(Self.counter(rejected)?["blockedUntil"])
            try await Task.sleep(for: .milliseconds(max(0, Int(firstUntil.timeIntervalSinceNow * 1000)) + 300))
            let released = try await api.decided(tenant, session: session)
            #expect(released.string("disposition") == "useCredential")
            // The count stays at the limit: the next rejection blocks again.
            #expect(released.int("remainingAttempts") == 1)
            let second = try await api.outcome(tenant, decision: try #require(released.string("decisionId")), "rejected")
            let until = try SessionTests.date(Self.counter(second)?["blockedUntil"])
            let counter = try #require(try await api.counters(tenant).first)
            #expect(counter["blocks"] as? Int == 2)
            let blockedAt = try SessionTests.date(counter["lastBlockedAt"])
            // 10 s + 100 s for the one earlier block.
            #expect(abs(until.timeIntervalSince(blockedAt) - 110) < 1)
        }
    }

    /// As Keycloak's wait increment: blocks grow while rejections keep coming, and start again
    /// from `blockSeconds` once the credential is accepted, its counter reset or its secret changed.
    @Test func blocksStopGrowingOnceAcceptedResetOrGivenANewSecret() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, password: "first")
            try await api.releasePolicy(tenant, then: #""maxFailures": 1, "persistence": "none", "blockSeconds": 4, "blockIncrementSeconds": 100, "maxBlockSeconds": 1000"#)
            let session = try await api.session(tenant)
            /// Rejects a fresh release and says how long the block it caused lasts.
            @Sendable func blockAfterRejecting(_ decision: String? = nil) async throws -> TimeInterval {
                var id = decision
                if id == nil { id = try await api.decided(tenant, session: session).string("decisionId") }
                let rejected = try await api.outcome(tenant, decision: try #require(id), "rejected")
                let until = try SessionTests.date(Self.counter(rejected)?["blockedUntil"])
                let blockedAt = try SessionTests.date(try #require(try await api.counters(tenant).first)["lastBlockedAt"])
                return until.timeIntervalSince(blockedAt)
            }
            func resetCounter() async throws {
                let counter = try #require(try await api.counters(tenant).first?["id"] as? String)
                #expect(try await api.call(.post, "/v1/counters/\(counter)/reset", key: tenant.adminKey).status == 200)
            }

            #expect(abs(try await blockAfterRejecting() - 4) < 1)
            try await resetCounter()
            #expect(abs(try await blockAfterRejecting() - 4) < 1, "an admin's reset starts the schedule again")

            #expect(try await api.call(.patch, "/v1/credentials/\(credential)", key: tenant.adminKey, json: ["password": "second"]).status == 200)
            #expect(abs(try await blockAfterRejecting() - 4) < 1, "a new secret is not blocked longer for the old one's blocks")

            // Two releases before the block: one is rejected, the other then accepted.
            try await resetCounter()
            let rejectedLater = try #require(try await api.decided(tenant, session: session, taskId: "a").string("decisionId"))
            let accepted = try #require(try await api.decided(tenant, session: session, taskId: "b").string("decisionId"))
            #expect(abs(try await blockAfterRejecting() - 4) < 1)
            try await api.outcome(tenant, decision: accepted, "accepted", upstreamStatus: 200)
            try await Task.sleep(for: .milliseconds(4200))
            #expect(abs(try await blockAfterRejecting(rejectedLater) - 4) < 1, "an accepted outcome starts the schedule again")

            // Without any of those, blocks still grow.
            try await Task.sleep(for: .milliseconds(4200))
            #expect(abs(try await blockAfterRejecting() - 104) < 1)
            #expect(try await api.counters(tenant).first?["blocks"] as? Int == 6, "blocks counts them all")
        }
    }

    /// Most releases of a `forSession` credential come from the session's memory: they block by
    /// the rule's schedule too, not by the default five minutes.
    @Test func aCredentialServedFromTheSessionBlocksByItsRulesSchedule() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 1, "persistence": "forSession", "blockSeconds": 20, "blockIncrementSeconds": 5, "maxBlockSeconds": 30"#)
            let session = try await api.session(tenant)
            #expect(try await api.decided(tenant, session: session, taskId: "a").string("source") == "policy")
            let remembered = try await api.decided(tenant, session: session, taskId: "b")
            #expect(remembered.string("source") == "session")
            let rejected = try await api.outcome(tenant, decision: try #require(remembered.string("decisionId")), "rejected")
            let until = try SessionTests.date(Self.counter(rejected)?["blockedUntil"])
            let blockedAt = try SessionTests.date(try #require(try await api.counters(tenant).first)["lastBlockedAt"])
            #expect(abs(until.timeIntervalSince(blockedAt) - 20) < 1, "blocked for \(until.timeIntervalSince(blockedAt)) s")
        }
    }

    @Test func anAcceptedOutcomeResetsTheCount() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 3, "persistence": "none""#)
            let session = try await api.session(tenant)
            let a = try #require(try await api.decided(tenant, session: session, taskId: "a").string("decisionId"))
            let b = try #require(try await api.decided(tenant, session: session, taskId: "b").string("decisionId"))
            let c = try #require(try await api.decided(tenant, session: session, taskId: "c").string("decisionId"))
            try await api.outcome(tenant, decision: a, "rejected")
            try await api.outcome(tenant, decision: b, "rejected")
            #expect(try await api.decided(tenant, session: session).int("remainingAttempts") == 1)
            let accepted = try await api.outcome(tenant, decision: c, "accepted", upstreamStatus: 200)
            #expect(accepted["counted"] as? Bool == false)
            let counter = try #require(try await api.counters(tenant).first)
            #expect(counter["failures"] as? Int == 0)
            #expect(counter["totalRejections"] as? Int == 2)
            #expect(try await api.decided(tenant, session: session).int("remainingAttempts") == 3)
        }
    }

    @Test func outcomesWithoutACredentialCountNothing() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            let decision = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            let reply = try await api.outcome(tenant, decision: decision, "rejected", upstreamStatus: 401)
            #expect(reply.status == 200)
            #expect(reply["counted"] as? Bool == false)
            #expect(reply["counter"] == nil || reply["counter"] is NSNull)
            #expect(try await api.counters(tenant).isEmpty)
        }
    }

    @Test func badReportsAreRefused() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            let decision = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            #expect(try await api.outcome(tenant, decision: UUID().uuidString, "accepted").status == 404)
            #expect(try await api.outcome(tenant, decision: decision, "maybe").errorCode == "invalid_enum_value")
            #expect(try await api.outcome(tenant, decision: decision, "rejected", upstreamStatus: 99).errorCode == "invalid_field")
            let unknown = try await api.call(.post, "/v1/decisions/\(decision)/outcome", key: tenant.clientKey, json: #"{"outcome": "accepted", "why": 1}"#)
            #expect(unknown.errorCode == "unknown_field")
            let admin = try await api.call(.post, "/v1/decisions/\(decision)/outcome", key: tenant.adminKey, json: ["outcome": "accepted"])
            #expect(admin.status == 403)
            #expect(try await api.decisionRecord(tenant, decision)["outcome"] is NSNull)
        }
    }
}
