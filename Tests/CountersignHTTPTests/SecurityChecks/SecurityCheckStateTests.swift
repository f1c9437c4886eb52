import CountersignCore
import Foundation
import HTTPTypes
import Testing

/// The attempt states move as configured: attempting, blocked, success, and expired when their
/// time is up, per client; the credential's own block across the fleet; exact counts under
/// concurrent reports.
@Suite("Security checks: states and counting")
struct SecurityCheckStateTests {
    static func handler(_ credential: String, _ rules: String) -> String {
        #"[{"securityCheck": "PinCodeAttempts", "action": "submitChallengeAnswer", "credentialId": "\#(credential)", "answer": {"pin": "$secret"}, \#(rules)}]"#
    }

    @Test func aClientIsBlockedAtMaxAttemptsAndTheBlockExpires() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            try await api.securityCheckHandlers(
                tenant,
                // Blocked for 15 s: long enough for a loaded machine to see the block (a CI run under
                // the whole suite's load took over 4 s for the two requests after it), short enough
                // to wait out.
                Self.handler(credential, #""maxAttempts": 2, "blockedStateExpirationSec": 15, "attemptingStateExpirationSec": 60, "maxFailures": 100"#)
            )
            let session = try await api.session(tenant, clientId: "android-1")

            let first = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": null}"#)
            #expect(first.answer("PinCodeAttempts")?["action"] as? String == "submitChallengeAnswer", "\(first)")
            _ = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure")
            // The admin rotates the PIN (it is no longer known bad), but the new one is refused too.
            _ = try await api.call(.patch, "/v1/credentials/\(credential)", key: tenant.adminKey, json: ["password": "9999"])
            let second = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": null}"#)
            #expect(second.answer("PinCodeAttempts")?["answer"] as? [String: String] == ["pin": "9999"], "\(second)")
            let blocking = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure", payload: #"{"failure": "Account blocked"}"#)
            let blockedAt = ContinuousClock.now
            #expect(blocking.securityCheckState?["state"] as? String == "blocked", "\(blocking)")
            #expect(blocking.securityCheckState?["remainingAttempts"] as? Int == 0)
            #expect(blocking.securityCheckState?["blocks"] as? Int == 1)

            let blocked = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 2}}"#)
            let answer = try #require(blocked.answer("PinCodeAttempts"))
            #expect(answer["action"] as? String == "cancel", "\(blocked)")
            #expect(answer["state"] as? String == "blocked")
            #expect(answer["remainingAttempts"] as? Int == 0)
            #expect(answer["blockedUntil"] is String)
            #expect(try await api.securityCheckStates(tenant, clientId: "android-1").first?["state"] as? String == "blocked")
            // Another client is not blocked by this one's attempts.
            let other = try await api.session(tenant, clientId: "android-2")
            let otherReply = try await api.securityChecks(tenant, session: other, #"{"PinCodeAttempts": null}"#)
            #expect(otherReply.answer("PinCodeAttempts")?["action"] as? String == "submitChallengeAnswer", "\(otherReply)")

            try await Task.sleep(until: blockedAt + .milliseconds(15300))
            let lapsed = try #require(try await api.securityCheckStates(tenant, clientId: "android-1").first)
            #expect(lapsed["state"] as? String == "expired")
            #expect(lapsed["storedState"] as? String == "blocked")
            #expect(lapsed["attempts"] as? Int == 0)
            #expect(lapsed["remainingAttempts"] as? Int == 2)
            let afterBlock = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": null}"#)
            let fresh = try #require(afterBlock.answer("PinCodeAttempts"))
            #expect(fresh["action"] as? String == "submitChallengeAnswer", "\(afterBlock)")
            #expect(fresh["state"] as? String == "attempting")
            #expect(fresh["remainingAttempts"] as? Int == 2)
        }
    }

    @Test func statesComeInPagesMostRecentlyChangedFirst() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            try await api.securityCheckHandlers(tenant, Self.handler(credential, #""maxAttempts": 3"#))
            let clients = ["c-1", "c-2", "c-3", "c-4", "c-5"]
            for client in clients {
                let session = try await api.session(tenant, clientId: client)
                #expect(try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": null}"#).status == 200)
            }
            let states = try await api.allPages("/v1/security-checks/states", "states", key: tenant.adminKey, limit: 2)
            #expect(states.pages == 3)
            #expect(states.entries.compactMap { $0["clientId"] as? String } == clients.reversed(), "most recently changed first, each once")
            let badCursor = try await api.call(.get, "/v1/security-checks/states?cursor=bm90LWEtY3Vyc29y", key: tenant.adminKey)
            #expect(badCursor.errorCode == "invalid_query")
        }
    }

    @Test func pagesAfterLongClientIdsAndCheckNamesAreRead() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            // The longest names the API takes: a check name of 100 characters, client ids of 200
            // characters, each 4 bytes of UTF-8 (a device named with emoji).
            let check = String(repeating: "P", count: 100)
            try await api.securityCheckHandlers(
                tenant,
                #"[{"securityCheck": "\#(check)", "action": "submitChallengeAnswer", "credentialId": "\#(credential)", "answer": {"pin": "$secret"}}]"#
            )
            let clients = ["1", "2", "3"].map { String(repeating: "📱", count: 199) + $0 }
            for client in clients {
                let session = try await api.session(tenant, clientId: client)
                #expect(try await api.securityChecks(tenant, session: session, #"{"\#(check)": null}"#).status == 200)
            }
            let states = try await api.allPages("/v1/security-checks/states", "states", key: tenant.adminKey, limit: 1)
            #expect(states.pages == 3)
            #expect(states.entries.compactMap { $0["clientId"] as? String } == clients.reversed(), "each state once, on its own page")
        }
    }

    /// A state that changes while an admin pages through the listing is still listed, once.
    @Test func aStateChangedWhileAnAdminPagesIsListedOnce() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            try await api.securityCheckHandlers(tenant, Self.handler(credential, #""maxAttempts": 3"#))
            var sessions: [String: String] = [:]
            for client in ["device-1", "device-2", "device-3"] {
                let session = try await api.session(tenant, clientId: client)
                sessions[client] = session
                #expect(try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": null}"#).status == 200)
            }
            let first = try await api.call(.get, "/v1/security-checks/states?limit=1", key: tenant.adminKey)
            var listed = try #require(first["states"] as? [[String: Any]]).compactMap { $0["clientId"] as? String }
            var cursor = first.string("nextCursor")

            // The oldest state changes between two pages.
            #expect(try await api.reportSecurityCheck(tenant, session: try #require(sessions["device-1"]), check: "PinCodeAttempts", "failure").status == 200)

            while let next = cursor {
                let page = try await api.call(.get, "/v1/security-checks/states?limit=1&cursor=\(next)", key: tenant.adminKey)
                try #require(page.status == 200, "\(page)")
                listed += try #require(page["states"] as? [[String: Any]]).compactMap { $0["clientId"] as? String }
                cursor = page.string("nextCursor")
            }
            #expect(listed == ["device-3", "device-2", "device-1"])
        }
    }

    @Test func anAdminEndsAClientsBlockAtOnce() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            try await api.securityCheckHandlers(tenant, Self.handler(credential, #""maxAttempts": 2, "blockedStateExpirationSec": 3600, "maxFailures": 100"#))
            let session = try await api.session(tenant, clientId: "android-1")
            _ = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": null}"#)
            _ = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure")
            _ = try await api.call(.patch, "/v1/credentials/\(credential)", key: tenant.adminKey, json: ["password": "9999"])
            _ = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": null}"#)
            let blocking = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure")
            #expect(blocking.securityCheckState?["state"] as? String == "blocked", "\(blocking)")
            _ = try await api.call(.patch, "/v1/credentials/\(credential)", key: tenant.adminKey, json: ["password": "1234"])

            func reset(_ clientId: String, key: String) async throws -> Reply {
                try await api.call(
                    .post, "/v1/security-checks/states/reset", key: key,
                    json: #"{"clientId": "\#(clientId)", "securityCheck": "PinCodeAttempts"}"#
                )
            }
            #expect(try await reset("android-1", key: tenant.clientKey).status == 403)
            let unknown = try await reset("android-9", key: tenant.adminKey)
            #expect(unknown.status == 404 && unknown.errorCode == "not_found", "\(unknown)")
            let done = try await reset("android-1", key: tenant.adminKey)
            #expect(done.status == 200, "\(done)")
            #expect(done.json["state"] as? String == "expired")
            #expect(done.json["storedState"] as? String == "blocked")
            #expect(done.json["remainingAttempts"] as? Int == 2)
            #expect(done.json["blocks"] as? Int == 1)
            let next = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": null}"#)
            #expect(next.answer("PinCodeAttempts")?["action"] as? String == "submitChallengeAnswer", "\(next)")
            #expect(next.answer("PinCodeAttempts")?["state"] as? String == "attempting")
        }
    }

    @Test func aCheckSentAgainWithAnErrorMessageCountsTheLastAnswersFailureOnce() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            try await api.securityCheckHandlers(tenant, Self.handler(credential, #""maxAttempts": 3, "attemptingStateExpirationSec": 60, "maxFailures": 100"#))
            let session = try await api.session(tenant, clientId: "ios-1")

            let first = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 3, "errorMsg": null}}"#)
            let firstID = try #require(first.answer("PinCodeAttempts")?["decisionId"] as? String, "\(first)")
            // The server refused the PIN and asks again; the client forwards that and reports nothing.
            let again = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 2, "errorMsg": "Pin code is not valid."}}"#)
            let secondID = try #require(again.answer("PinCodeAttempts")?["decisionId"] as? String, "\(again)")
            #expect(again.answer("PinCodeAttempts")?["remainingAttempts"] as? Int == 2)
            let firstRecord = try await api.call(.get, "/v1/decisions/\(firstID)", key: tenant.adminKey)
            #expect(firstRecord.json["outcome"] as? String == "rejected", "\(firstRecord)")
            var state = try #require(try await api.securityCheckStates(tenant, clientId: "ios-1").first)
            #expect(state["attempts"] as? Int == 1)
            #expect(state["lastFailure"] as? String == "Pin code is not valid.")
            let counters = try await api.call(.get, "/v1/counters", key: tenant.adminKey)
            #expect((counters.json["counters"] as? [[String: Any]])?.first?["failures"] as? Int == 1, "\(counters)")

            // The client also reports that failure, naming the answer: it was counted already.
            let late = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure", decisionId: firstID)
            #expect(late.json["applied"] as? Bool == false, "\(late)")
            // A failure reported before the server asks again is not counted twice either.
            let reported = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure")
            #expect(reported.json["applied"] as? Bool == true, "\(reported)")
            #expect((reported.json["decision"] as? [String: Any])?["id"] as? String == secondID)
            _ = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 1, "errorMsg": "Pin code is not valid."}}"#)
            state = try #require(try await api.securityCheckStates(tenant, clientId: "ios-1").first)
            #expect(state["attempts"] as? Int == 2)
            #expect(state["totalFailures"] as? Int == 2)
        }
    }

    /// A list whose second check kept losing its race (here: its credential's count moved under
    /// its first round, and its second round's write failed) ends in an error; the first check's
    /// answer, recorded in round one, never went out. It is cancelled, so that the retry the
    /// error invites, carrying the server's `errorMsg` for the answer the client did get, counts
    /// no failure of an answer nobody sent.
    @Test func answersRecordedBeforeTheListFailedAreCancelled() async throws {
        try await TestService.withSideAccess { api, side in
            let tenant = try await api.tenant()
            let pin = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            let otp = try await api.credential(tenant, host: "mfp.example.com", account: "otp", password: "1111")
            try await api.securityCheckHandlers(
                tenant,
                #"[{"securityCheck": "P1", "action": "submitChallengeAnswer", "credentialId": "\#(pin)", "answer": {"pin": "$secret"}, "maxFailures": 100},"#
                    + #" {"securityCheck": "P2", "action": "submitChallengeAnswer", "credentialId": "\#(otp)", "answer": {"otp": "$secret"}, "maxFailures": 100}]"#
            )
            let session = try await api.session(tenant, clientId: "ios-1")
            // P2's credential gets a counter, which the triggers below move.
            _ = try await api.securityChecks(tenant, session: session, #"{"P2": {"errorMsg": null}}"#)
            _ = try await api.reportSecurityCheck(tenant, session: session, check: "P2", "failure")
            // The answer to P1 the client sends to the server.
            let sent = try #require(try await api.securityChecks(tenant, session: session, #"{"P1": {"errorMsg": null}}"#).answer("P1")?["decisionId"] as? String)
            try await side.withConnection { connection in
                try connection.simpleQuery(
                    """
                    CREATE FUNCTION move_p2_counter() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                      UPDATE rejection_counters SET failures = failures + 1 WHERE credential_id = '\(otp)'; RETURN NEW;
                    END $$;
                    CREATE TRIGGER move_p2_counter AFTER INSERT OR UPDATE ON security_check_states FOR EACH ROW
                      WHEN (NEW.security_check = 'P2') EXECUTE FUNCTION move_p2_counter();
                    CREATE FUNCTION refuse_p2_answers() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                      RAISE EXCEPTION 'refused'; END $$;
                    CREATE TRIGGER refuse_p2_answers BEFORE INSERT ON decisions FOR EACH ROW
                      WHEN (NEW.task_id = 'P2') EXECUTE FUNCTION refuse_p2_answers();
                    """
                )
            }
            let failed = try await api.securityChecks(tenant, session: session, #"{"P1": {"errorMsg": null}, "P2": {"errorMsg": null}}"#)
            #expect(failed.status >= 500, "\(failed)")
            try await side.withConnection { connection in
                try connection.simpleQuery(
                    "DROP TRIGGER move_p2_counter ON security_check_states; DROP FUNCTION move_p2_counter(); DROP TRIGGER refuse_p2_answers ON decisions; DROP FUNCTION refuse_p2_answers()"
                )
            }
            let decisions = try await api.call(.get, "/v1/decisions?sessionId=\(session)", key: tenant.adminKey)
            let unsent = try #require((decisions.json["decisions"] as? [[String: Any]])?.first { $0["taskId"] as? String == "P1" }, "\(decisions)")
            #expect(unsent["id"] as? String != sent)
            #expect(unsent["outcome"] as? String == "cancelled" && unsent["outcomeSource"] as? String == "unsent", "\(unsent)")

            // The server refuses the answer the client sent and asks again: that answer's failure
            // counts, once; the one never sent is not the last answer.
            let retried = try await api.securityChecks(tenant, session: session, #"{"P1": {"errorMsg": "Pin code is not valid."}, "P2": {"errorMsg": null}}"#)
            #expect(retried.status == 200, "\(retried)")
            #expect(try await api.call(.get, "/v1/decisions/\(sent)", key: tenant.adminKey).json["outcome"] as? String == "rejected")
            let counters = try await api.call(.get, "/v1/counters?credentialId=\(pin)", key: tenant.adminKey)
            #expect((counters.json["counters"] as? [[String: Any]])?.map { $0["failures"] as? Int } == [1], "\(counters)")
            let state = try #require(try await api.securityCheckStates(tenant, clientId: "ios-1").first { $0["securityCheck"] as? String == "P1" })
            #expect(state["totalFailures"] as? Int == 1, "\(state)")
        }
    }

    @Test func attemptingAndSuccessStatesExpireAsConfigured() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "1234")
            try await api.securityCheckHandlers(
                tenant,
                Self.handler(credential, #""maxAttempts": 3, "attemptingStateExpirationSec": 8, "successStateExpirationSec": 8"#)
            )
            let session = try await api.session(tenant, clientId: "web-1")
            _ = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 3, "errorMsg": null}}"#)
            let failed = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure")
            #expect(failed.securityCheckState?["attempts"] as? Int == 1, "\(failed)")

            // Windows of 8 s: long enough for the steps before to finish on a busy machine.
            try await Task.sleep(for: .milliseconds(8300))
            let lapsed = try #require(try await api.securityCheckStates(tenant, clientId: "web-1").first)
            #expect(lapsed["state"] as? String == "expired")
            #expect(lapsed["attempts"] as? Int == 0)
            #expect(lapsed["totalFailures"] as? Int == 1)
            let again = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 3, "errorMsg": null}}"#)
            #expect(again.answer("PinCodeAttempts")?["remainingAttempts"] as? Int == 3, "a new attempting window: \(again)")

            let succeeded = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "success")
            #expect(succeeded.securityCheckState?["state"] as? String == "success", "\(succeeded)")
            #expect(try await api.securityCheckStates(tenant, clientId: "web-1").first?["state"] as? String == "success")
            try await Task.sleep(for: .milliseconds(8300))
            let over = try #require(try await api.securityCheckStates(tenant, clientId: "web-1").first)
            #expect(over["state"] as? String == "expired")
            #expect(over["storedState"] as? String == "success")
            #expect(over["lastSuccessAt"] is String)
        }
    }

    @Test func theCredentialBlocksAcrossTheFleetAndTheBlockExpires() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            // A block of 12 s: long enough for the steps before to finish on a busy machine (a
            // whole parallel run once took more than 4 s between two of them).
            try await api.securityCheckHandlers(tenant, Self.handler(credential, #""maxAttempts": 5, "maxFailures": 2, "blockSeconds": 12"#))
            let alice = try await api.session(tenant, clientId: "alice-phone")
            let bob = try await api.session(tenant, clientId: "bob-phone")

            _ = try await api.securityChecks(tenant, session: alice, #"{"PinCodeAttempts": {"remainingAttempts": 5}}"#)
            _ = try await api.reportSecurityCheck(tenant, session: alice, check: "PinCodeAttempts", "failure")
            let bobFirst = try await api.securityChecks(tenant, session: bob, #"{"PinCodeAttempts": {"remainingAttempts": 5}}"#)
            #expect(bobFirst.answer("PinCodeAttempts")?["action"] as? String == "submitChallengeAnswer", "\(bobFirst)")
            let bobFailure = try await api.reportSecurityCheck(tenant, session: bob, check: "PinCodeAttempts", "failure")
            let counter = try #require(bobFailure.json["counter"] as? [String: Any], "\(bobFailure)")
            #expect(counter["failures"] as? Int == 2)
            #expect(counter["blockedUntil"] is String)
            #expect(counter["remainingAttempts"] as? Int == 0)
            #expect(bobFailure.securityCheckState?["attempts"] as? Int == 1, "bob's own count is his alone")

            let aliceAgain = try await api.securityChecks(tenant, session: alice, #"{"PinCodeAttempts": {"remainingAttempts": 4}}"#)
            let blocked = try #require(aliceAgain.answer("PinCodeAttempts"))
            #expect(blocked["action"] as? String == "cancel", "\(aliceAgain)")
            #expect((blocked["reason"] as? String)?.contains("blocked") == true)
            #expect(blocked["blockedUntil"] is String)
            #expect(blocked["state"] as? String == "attempting", "alice herself is not blocked")

            let until = try #require((counter["blockedUntil"] as? String).flatMap(Timestamp.parse))
            try await Task.sleep(for: .milliseconds(max(0, Int(until.timeIntervalSinceNow * 1000)) + 300))
            let afterBlock = try await api.securityChecks(tenant, session: alice, #"{"PinCodeAttempts": {"remainingAttempts": 4}}"#)
            #expect(afterBlock.answer("PinCodeAttempts")?["action"] as? String == "submitChallengeAnswer", "\(afterBlock)")
        }
    }

    /// A block is the credential's, whichever space counted it: blocked by HTTP challenges, it is
    /// not given to a security check either.
    @Test func aCredentialBlockedByChallengesAnswersNoSecurityCheck() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant)
            let current = try await api.call(.get, "/v1/policy", key: tenant.adminKey)
            let saved = try await api.call(
                .put, "/v1/policy", key: tenant.adminKey,
                json: #"""
                    {"version": \#(current.json["version"] as? Int ?? 0),
                     "rules": [{"id": "intranet", "match": {"host": "*.example.com"}, "then": {"disposition": "useCredential", "credentialId": "\#(credential)", "maxFailures": 1, "blockSeconds": 600}}],
                     "securityChecks": \#(Self.handler(credential, #""maxAttempts": 5, "maxFailures": 5"#))}
                    """#
            )
            try #require(saved.status == 200, "\(saved)")
            let session = try await api.session(tenant)
            let released = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 5}}"#)
            #expect(released.answer("PinCodeAttempts")?["action"] as? String == "submitChallengeAnswer", "\(released)")

            let decision = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            let rejected = try await api.outcome(tenant, decision: decision, "rejected", upstreamStatus: 401)
            #expect((rejected.json["counter"] as? [String: Any])?["blockedUntil"] is String, "\(rejected)")

            let other = try await api.session(tenant, clientId: "bob-phone")
            let refused = try await api.securityChecks(tenant, session: other, #"{"PinCodeAttempts": {"remainingAttempts": 5}}"#)
            let answer = try #require(refused.answer("PinCodeAttempts"), "\(refused)")
            #expect(answer["action"] as? String == "cancel", "\(refused)")
            #expect(answer["blockedUntil"] is String)
            #expect(!refused.text.contains("s3cret"))
        }
    }

    /// A failure counts against the handler's limit when it is reported, not when the answer was given.
    @Test func aLoweredLimitHoldsForAnAnswerAlreadyGiven() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            try await api.securityCheckHandlers(tenant, Self.handler(credential, #""maxAttempts": 5, "maxFailures": 5, "blockSeconds": 600"#))
            let session = try await api.session(tenant)
            let answered = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 5}}"#)
            #expect(answered.answer("PinCodeAttempts")?["action"] as? String == "submitChallengeAnswer", "\(answered)")
            try await api.securityCheckHandlers(tenant, Self.handler(credential, #""maxAttempts": 5, "maxFailures": 1, "blockSeconds": 600"#))
            let failure = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure")
            let counter = try #require(failure.json["counter"] as? [String: Any], "\(failure)")
            #expect(counter["blockedUntil"] is String, "\(failure)")
        }
    }

    /// With no handler counting the check any more, a report says so: its `state` is null, as
    /// the contract says, even for a client that still has a row from before.
    @Test func aReportWithoutACountingHandlerHasNoState() async throws {
        try await TestService.run { api in
            let (tenant, session, _) = try await Self.answeredPinCheck(api)
            try await api.securityCheckHandlers(tenant, "[]")
            let failure = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure")
            #expect(failure.status == 200, "\(failure)")
            #expect(failure.json["state"] is NSNull, "\(failure)")
        }
    }

    /// A handler that now answers with another credential does not set this one's limit.
    @Test func aHandlerOfAnotherCredentialDoesNotSetTheLimit() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            let other = try await api.credential(tenant, host: "mfp.example.com", account: "pin2", password: "1111")
            try await api.securityCheckHandlers(tenant, Self.handler(credential, #""maxAttempts": 5, "maxFailures": 5, "blockSeconds": 600"#))
            let session = try await api.session(tenant)
            _ = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 5}}"#)
            try await api.securityCheckHandlers(tenant, Self.handler(other, #""maxAttempts": 5, "maxFailures": 1, "blockSeconds": 600"#))
            let failure = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure")
            let counter = try #require(failure.json["counter"] as? [String: Any], "\(failure)")
            #expect(counter["blockedUntil"] is NSNull, "\(failure)")
            #expect(counter["failures"] as? Int == 1)
        }
    }

    /// A tenant whose handler answers `PinCodeAttempts` (at most 3 attempts), the session of
    /// client `android-1` that was answered, and the answer's decision.
    static func answeredPinCheck(_ api: TestAPI) async throws -> (TestAPI.Tenant, String, String) {
        let tenant = try await api.tenant()
        let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
        try await api.securityCheckHandlers(tenant, Self.handler(credential, #""maxAttempts": 3"#))
        let session = try await api.session(tenant, clientId: "android-1")
        let reply = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": null}"#)
        return (tenant, session, try #require(reply.answer("PinCodeAttempts")?["decisionId"] as? String, "\(reply)"))
    }

    @Test func anAnswersOutcomeGoesToItsChecksRoutesNotTheDecisionsOne() async throws {
        try await TestService.run { api in
            let (tenant, session, decision) = try await Self.answeredPinCheck(api)

            for outcome in ["rejected", "accepted"] {
                let refused = try await api.outcome(tenant, decision: decision, outcome)
                #expect(refused.status == 409)
                #expect(refused.errorCode == "security_check_decision")
            }
            // Nothing was recorded: the check's own route still counts the attempt.
            let failure = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure")
            #expect(failure.json["applied"] as? Bool == true, "\(failure)")
            #expect(try await api.securityCheckStates(tenant, clientId: "android-1").first?["attempts"] as? Int == 1)
        }
    }

    /// A challenge made to look like the retry of a check's answer (its space, its task, the
    /// account it released) is answered as any challenge of an unknown method, and explained so:
    /// the answer is judged by the check's own reports, not rejected by it.
    @Test func aChallengeLookingLikeTheRetryOfAnAnswerRejectsNothing() async throws {
        try await TestService.run { api in
            let (tenant, session, decision) = try await Self.answeredPinCheck(api)

            var retry = ChallengeBody(
                taskId: "PinCodeAttempts",
                protectionSpace: Space(host: "securitycheck.local", port: 0, protocol: "securitycheck", realm: "PinCodeAttempts", authenticationMethod: "SecurityCheck")
            )
            retry.previousFailureCount = 1
            retry.proposedCredential = .init(user: "pin", hasPassword: true)
            let answered = try await api.decide(tenant, session: session, retry)
            #expect(answered.status == 200 && answered.string("disposition") == "performDefaultHandling", "\(answered)")
            #expect(answered.json["countedRejection"] is NSNull, "\(answered)")
            let explained = try await api.call(
                .post, "/v1/policy/explain", key: tenant.adminKey,
                json: ExplainBody(challenge: retry, clientId: "android-1", sessionId: session)
            )
            #expect(explained.status == 200, "\(explained)")

            let recorded = try await api.call(.get, "/v1/decisions/\(decision)", key: tenant.adminKey)
            #expect(recorded.json["outcome"] is NSNull, "\(recorded)")
            #expect((try await api.securityCheckStates(tenant, clientId: "android-1").first?["attempts"] as? Int ?? 0) == 0)
        }
    }

    @Test func concurrentFailureReportsAreCountedExactly() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            try await api.securityCheckHandlers(tenant, Self.handler(credential, #""maxAttempts": 1000, "maxFailures": 1000"#))
            // One client, many sessions (many app launches), each answered once.
            var sessions: [String] = []
            for _ in 0..<12 {
                let session = try await api.session(tenant, clientId: "kiosk")
                let reply = try await api.securityChecks(tenant, session: session, #"{"PinCodeAttempts": null}"#)
                try #require(reply.answer("PinCodeAttempts")?["action"] as? String == "submitChallengeAnswer", "\(reply)")
                sessions.append(session)
            }
            // Every failure reported twice at once: each counts exactly once.
            let applied = try await withThrowingTaskGroup(of: Bool.self) { group in
                for session in sessions + sessions {
                    group.addTask {
                        let reply = try await api.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure")
                        #expect(reply.status == 200, "\(reply)")
                        return reply.json["applied"] as? Bool == true
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(applied == 12)
            let state = try #require(try await api.securityCheckStates(tenant, clientId: "kiosk").first)
            #expect(state["attempts"] as? Int == 12)
            #expect(state["totalFailures"] as? Int == 12)
            let counters = try await api.call(.get, "/v1/counters?credentialId=\(credential)", key: tenant.adminKey)
            #expect((counters.json["counters"] as? [[String: Any]])?.first?["totalRejections"] as? Int == 12)
        }
    }
}

private struct ExplainBody: Encodable {
    var challenge: ChallengeBody
    var clientId: String
    var sessionId: String
}
