@testable import CountersignHTTP
import CountersignTestSupport
import Foundation
import HTTPTypes
import Logging
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Access log")
struct AccessLogTests {
    /// A logger at `info` whose lines `box` keeps.
    static func recordingLogger() -> (box: LogLines, logger: Logger) {
        let box = LogLines()
        let handler = RecordingLogHandler(into: box)
        var logger = Logger(label: "countersign.test.access", factory: { _ in handler })
        logger.logLevel = .info
        return (box, logger)
    }

    /// The access line of each request says who asked, though the key is checked further in
    /// than the line is written; the ids are in lower case, as in the API's answers.
    @Test func accessLinesNameTheTenantAndKeyPrefix() async throws {
        let (box, logger) = Self.recordingLogger()
        let asked = Mutex((tenantID: "", clientKey: ""))
        try await TestService.run(logger: logger) { api in
            let tenant = try await api.tenant()
            asked.withLock { $0 = (tenant.id, tenant.clientKey) }
            #expect(tenant.id == tenant.id.lowercased())
            _ = try await api.session(tenant)
            #expect(try await api.call(.post, "/v1/sessions", json: ["clientId": "device-1"]).status == 401)
            #expect(try await api.call(.get, "/v1/policy", key: tenant.clientKey).status == 403)
        }
        let (tenantID, clientKey) = asked.withLock { $0 }
        let clientPrefix = clientKey.split(separator: "_").prefix(2).joined(separator: "_")
        let lines = box.all.filter { $0.hasPrefix("info request ") }
        let opened = lines.filter { $0.contains("\"route\": /v1/sessions") && $0.contains("\"status\": 201") }
        #expect(opened.count == 1, "\(lines)")
        #expect(opened.allSatisfy { $0.contains("\"tenant\": \(tenantID)") && $0.contains("\"key\": \(clientPrefix)") }, "\(opened)")
        let refused = lines.filter { $0.contains("\"status\": 403") }
        #expect(refused.count == 1 && refused.allSatisfy { $0.contains("\"key\": \(clientPrefix)") }, "\(refused)")
        let anonymous = lines.filter { $0.contains("\"status\": 401") }
        #expect(anonymous.count == 1 && anonymous.allSatisfy { !$0.contains("\"tenant\"") && !$0.contains("\"key\"") }, "\(anonymous)")
        let operatorLines = lines.filter { $0.contains("\"route\": /v1/tenants") }
        #expect(!operatorLines.isEmpty && operatorLines.allSatisfy { $0.contains("\"principal\": operator") }, "\(operatorLines)")
        // No line carries a whole key.
        #expect(box.all.allSatisfy { !$0.contains(clientKey) })
    }

    /// The access line names the connection's address and, apart, what `X-Forwarded-For` says;
    /// a proxy's request id of a safe shape is kept, any other replaced.
    @Test func accessLinesNameThePeerAndKeepAProxysRequestID() async throws {
        let (box, logger) = Self.recordingLogger()
        try await TestService.run(.live, logger: logger) { api in
            let kept = try await api.call(.get, "/healthz", headers: [RequestObservationMiddleware.requestIDField: "nginx-3f2a.9_b", RequestObservationMiddleware.forwardedForField: "203.0.113.7, 10.0.0.2"])
            #expect(kept.headers[RequestObservationMiddleware.requestIDField] == "nginx-3f2a.9_b")
            let replaced = try await api.call(.get, "/healthz", headers: [RequestObservationMiddleware.requestIDField: "a=b;c", RequestObservationMiddleware.forwardedForField: "203.0.113.8 LOGIN OK user admin, [2001:db8::1], <script>"])
            let replacement = try #require(replaced.headers[RequestObservationMiddleware.requestIDField])
            #expect(replacement != "a=b;c" && !replacement.isEmpty)
        }
        let lines = box.all.filter { $0.hasPrefix("info request ") && $0.contains("/healthz") }
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.allSatisfy { $0.contains("\"peer\": 127.0.0.1") }, "\(lines)")
        #expect(lines.first { $0.contains("nginx-3f2a.9_b") }?.contains("\"forwarded_for\": 203.0.113.7, 10.0.0.2") == true, "\(lines)")
        #expect(lines.contains { $0.contains("\"forwarded_for\": ?, [2001:db8::1], ?") }, "\(lines)")
        #expect(!lines.contains { $0.contains("a=b;c") }, "\(lines)")
    }

    /// JSON lines give numbers as numbers, which log systems compare as such.
    @Test func jsonAccessLinesHaveNumbersAsNumbers() async throws {
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let instance = try await ServiceProcess.ready(databaseURL: try await TestDatabase.freshDatabase(), keys: keys, logLevel: "info", arguments: ["--log-format", "json"])
        defer { instance.stop() }
        let lines = instance.log.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let access = try #require(lines.first { $0["msg"] as? String == "request" && $0["route"] as? String == "/readyz" }, "\(instance.log)")
        #expect(access["status"] as? Int == 200, "\(access)")
        #expect(access["duration_ms"] is NSNumber && !(access["duration_ms"] is String), "\(access)")
        #expect(access["method"] as? String == "GET")
    }

    @Test func theLogSaysWhenAShutdownBegins() async throws {
        let (box, logger) = Self.recordingLogger()
        try await TestService.run(logger: logger) { api in
            let health = try await api.call(.get, "/healthz")
            #expect(health.status == 200)
            #expect(!box.all.contains { $0.contains("shutting down") })
        }
        #expect(box.all.filter { $0.hasPrefix("notice shutting down: finishing the requests in flight") }.count == 1, "\(box.all)")
    }

    /// `countersign serve` as an operator runs it: the notice comes when SIGTERM does, while a
    /// request is still in flight, not once the drain is over.
    @Test func theNoticeComesWithTheSignalBeforeTheDrain() async throws {
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let instance = try await ServiceProcess.ready(databaseURL: try await TestDatabase.freshDatabase(), keys: keys, logLevel: "notice")
        defer { instance.stop() }
        let client = instance.client()
        let tenant = try await TestAPI(client).tenant()
        try await client.shutdown()

        let body = #"{"clientId": "device-draining"}"#
        let head = "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tenant.clientKey)\r\n"
            + "Content-Type: application/json\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
        let seen = Mutex((noticed: false, runningThen: false))
        let reply = try await RawHTTP.exchange(head: head, thenBody: body, port: instance.port) {
            instance.signal(SIGTERM)
            for _ in 0..<100 where !instance.log.contains("shutting down") { usleep(50_000) }
            seen.withLock { $0 = (instance.log.contains("shutting down"), instance.isRunning) }
        }
        let (noticed, runningThen) = seen.withLock { $0 }
        #expect(noticed && runningThen, "the notice is logged while the request is in flight: \(instance.log)")
        #expect(reply.final.status == 201, "the request in flight is finished: \(reply.final)")
        #expect(try await instance.exitStatus(within: .seconds(20)) == 0, "\(instance.log)")
        #expect(instance.log.components(separatedBy: "shutting down").count == 2, "said once: \(instance.log)")
    }

    /// A revoked key is refused, but its secret checked out: its access line names the tenant and
    /// the key's prefix, so that an operator can tell who still calls with it.
    @Test func refusalsOfARevokedKeyNameTheKey() async throws {
        let (box, logger) = Self.recordingLogger()
        let asked = Mutex((tenantID: "", prefix: ""))
        try await TestService.run(logger: logger) { api in
            let tenant = try await api.tenant()
            let created = try await api.call(.post, "/v1/keys", key: tenant.adminKey, json: ["name": "temp", "role": "client"])
            let secret = try #require(created.string("secret"))
            let key = try #require(created["key"] as? [String: Any])
            asked.withLock { $0 = (tenant.id, key["prefix"] as? String ?? "?") }
            #expect(try await api.call(.delete, "/v1/keys/\(key["id"] as? String ?? "")", key: tenant.adminKey).status == 200)
            #expect(try await api.call(.post, "/v1/sessions", key: secret, json: ["clientId": "device-1"]).errorCode == "invalid_api_key")
        }
        let (tenantID, prefix) = asked.withLock { $0 }
        let refused = box.all.filter { $0.hasPrefix("info request ") && $0.contains("\"status\": 401") }
        #expect(refused.count == 1 && refused.allSatisfy { $0.contains("\"tenant\": \(tenantID)") && $0.contains("\"key\": \(prefix)") }, "\(refused)")
    }

    /// A disabled tenant's key is refused, but its secret checked out: its access line names the
    /// tenant and the key's prefix, so that an operator can tell whose fleet still calls. A key
    /// whose secret did not check out stays anonymous.
    @Test func refusalsOfADisabledTenantsKeysNameTheKey() async throws {
        let (box, logger) = Self.recordingLogger()
        let asked = Mutex((tenantID: "", clientKey: ""))
        try await TestService.run(logger: logger) { api in
            let tenant = try await api.tenant()
            asked.withLock { $0 = (tenant.id, tenant.clientKey) }
            #expect(try await api.call(.post, "/v1/tenants/\(tenant.id)/disable", key: TestService.operatorKey).status == 200)
            #expect(try await api.call(.post, "/v1/sessions", key: tenant.clientKey, json: ["clientId": "device-1"]).errorCode == "tenant_disabled")
            let forged = String(tenant.clientKey.dropLast(4)) + "AAAA"
            #expect(try await api.call(.get, "/v1/keys", key: forged).errorCode == "invalid_api_key")
        }
        let (tenantID, clientKey) = asked.withLock { $0 }
        let clientPrefix = clientKey.split(separator: "_").prefix(2).joined(separator: "_")
        let lines = box.all.filter { $0.hasPrefix("info request ") }
        let refused = lines.filter { $0.contains("\"status\": 403") }
        #expect(refused.count == 1 && refused.allSatisfy { $0.contains("\"tenant\": \(tenantID)") && $0.contains("\"key\": \(clientPrefix)") }, "\(refused)")
        let forged = lines.filter { $0.contains("\"status\": 401") }
        #expect(forged.count == 1 && forged.allSatisfy { !$0.contains("\"tenant\"") && !$0.contains("\"key\"") }, "\(forged)")
        #expect(box.all.allSatisfy { !$0.contains(clientKey) })
    }

    /// A request refused before any route sees it gets an access line like any other's, with
    /// its duration.
    @Test func refusalsBeforeRoutingHaveTheirDuration() async throws {
        let (box, logger) = Self.recordingLogger()
        try await TestService.run(.live, logger: logger) { api in
            let port = try #require(api.port)
            _ = try await RawHTTP.exchange("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip\r\n\r\n", port: port)
            #expect(try await api.call(.get, "/healthz").status == 200)
        }
        let lines = box.all.filter { $0.hasPrefix("info request ") }
        let refused = try #require(lines.first { $0.contains("\"status\": 400") }, "\(lines)")
        let served = try #require(lines.first { $0.contains("\"status\": 200") }, "\(lines)")
        #expect(refused.contains("\"duration_ms\": ") && served.contains("\"duration_ms\": "), "\(lines)")
    }
}
