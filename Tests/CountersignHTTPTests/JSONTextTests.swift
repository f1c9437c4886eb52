import CountersignCore
@testable import CountersignService
import Foundation
import Testing

/// The hand-written JSON of the hot paths says exactly what the API's encoder, which writes
/// every other response, would.
@Suite("Hand-written JSON")
struct JSONTextTests {
    static func encoded(_ value: some Encodable) throws -> NSDictionary {
        try JSONSerialization.jsonObject(with: Data(APIJSONEncoder().encode(value))) as! NSDictionary
    }

    @Test(arguments: [true, false])
    func decisionAnswerMatchesAPIEncoder(released: Bool) throws {
        let answer = DecisionAnswer(
            decisionId: UUID(),
            disposition: released ? .useCredential : .cancelAuthenticationChallenge,
            credential: released ? ReleasedCredential(kind: .password, user: "ünïcode \"quoted\"\n", password: "p\\a\u{1}ss", domain: nil) : nil,
            persistence: .forSession,
            scope: .task,
            remainingAttempts: released ? 2 : nil,
            blockedUntil: released ? nil : Date(timeIntervalSince1970: 1_800_000_000.123),
            rule: RuleReference(id: "r1", name: released ? nil : "Rule \"one\""),
            source: .policy,
            reason: "a reason with / and \t",
            countedRejection: released ? nil : UUID()
        )
        let handWritten = try JSONSerialization.jsonObject(with: Data(answer.jsonText.utf8)) as! NSDictionary
        #expect(handWritten == (try Self.encoded(answer)))
    }

    @Test(arguments: ["identity", "trusted", "untrusted"])
    func tlsAnswersMatchAPIEncoder(kind: String) throws {
        let verdict = ServerTrustVerdict(
            trusted: kind == "trusted",
            host: "api.example.com",
            failure: kind == "untrusted" ? .init(code: "pin_mismatch", detail: "no pin \"matched\"", depth: nil) : nil,
            verifiedChain: ["CN=api.example.com,O=Example", "CN=Root/CA"],
            leafSubject: "CN=api.example.com,O=Example",
            matchedPin: kind == "trusted" ? "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=" : nil,
            evaluatedAt: Date(timeIntervalSince1970: 1_800_000_000),
            chainSHA256: String(repeating: "ab", count: 32)
        )
        let identity = ReleasedIdentity(
            identityId: UUID(), subject: "CN=device/1", issuer: "CN=CA", sha256Fingerprint: String(repeating: "c", count: 64),
            notAfter: Date(timeIntervalSince1970: 1_900_000_000), pkcs12: "MIIB+w==", passphrase: "pass-phrase_1"
        )
        let answer = DecisionAnswer(
            decisionId: UUID(),
            disposition: kind == "untrusted" ? .cancelAuthenticationChallenge : .useCredential,
            credential: nil,
            persistence: .forSession,
            scope: .session,
            remainingAttempts: nil,
            blockedUntil: nil,
            rule: RuleReference(id: "tls", name: nil),
            source: .policy,
            reason: "tls",
            countedRejection: nil,
            identity: kind == "identity" ? identity : nil,
            trust: kind == "identity" ? nil : verdict
        )
        let handWritten = try JSONSerialization.jsonObject(with: Data(answer.jsonText.utf8)) as! NSDictionary
        #expect(handWritten == (try Self.encoded(answer)))
        #expect((handWritten["credential"] as? NSDictionary)?["kind"] as? String == (kind == "untrusted" ? nil : kind == "identity" ? "clientIdentity" : "serverTrust"))
    }

    @Test func aReleasedPasswordIsRedactedWhenPrintedOrDumped() {
        let released = ReleasedCredential(kind: .password, user: "alice", password: "pa55-released", domain: nil)
        var dumped = ""
        dump(released, to: &dumped)
        for text in [String(describing: released), String(reflecting: released), dumped] {
            #expect(!text.contains("pa55-released") && text.contains("redacted"), "\(text)")
        }
        #expect(released.jsonText.contains("pa55-released"), "the answer itself carries it")
    }

    @Test func aReadyAuthorizationHeaderIsRedactedWhenPrintedOrDumped() {
        let header = ResponseAnswer.HeaderField(name: "Authorization", value: "Basic YWxpY2U6cGE1NS1yZWxlYXNlZA==")
        var dumped = ""
        dump(header, to: &dumped)
        for text in [String(describing: header), String(reflecting: header), dumped] {
            #expect(!text.contains("YWxpY2U6cGE1NS1yZWxlYXNlZA") && text.contains("redacted"), "\(text)")
        }
    }

    @Test func escapesEveryControlCharacter() throws {
        var object = JSONObjectText()
        let text = String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }) + "\"\\é€😀"
        object.add("k", text)
        let parsed = try JSONSerialization.jsonObject(with: Data(object.text.utf8)) as! [String: String]
        #expect(parsed["k"] == text)
    }
}
