import CountersignCrypto
import CountersignTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The loop closed with real TLS: an `openssl s_server` that requires a client certificate, an
/// identity released by Countersign as PKCS#12, and curl completing the handshake with it; and
/// a chain captured from that live server judged by Countersign.
@Suite(.serialized) struct TLSHandshakeTests {
    let pki: TestPKI

    init() async throws {
        pki = try await TestPKI.shared()
    }

    @Test func aReleasedIdentityCompletesAHandshakeAndAnUnacceptedOneDoesNot() async throws {
        let server = try await TLSServer.start(pki: pki)
        defer { server.stop() }
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let accepted = try await api.identity(tenant, pki.clientA)
            // A key and certificate the server's client CAs never issued.
            let unaccepted = try await api.identity(tenant, pem: pki.otherRootServer)
            try await api.policy(
                tenant,
                rules: """
                    [{"id": "unaccepted", "match": {"host": "127.0.0.1", "port": \(server.port + 1)},
                      "then": {"disposition": "useCredential", "identityId": "\(unaccepted)", "persistence": "none"}},
                     {"id": "mtls", "match": {"host": "127.0.0.1", "methods": ["NSURLAuthenticationMethodClientCertificate"]},
                      "then": {"disposition": "useCredential", "persistence": "none"}}]
                    """
            )
            let session = try await api.session(tenant)

            // What the server lists as acceptable CAs: its -CAfile, both client CAs.
            let names = [pki.clientCAA.subjectDER, pki.clientCAB.subjectDER]
            let good = try await api.certificateChallenge(tenant, session: session, host: "127.0.0.1", port: server.port, names: names)
            #expect(good.credential?["identityId"] as? String == accepted, "\(good)")
            let goodCredential = try #require(good.credential)
            let goodResult = try await curl(server: server, credential: goodCredential)
            #expect(goodResult.status == 0, "curl failed with the released identity: \(goodResult.errorText)")
            #expect(goodResult.outputText.contains("s_server"), "the server's status page: \(goodResult.outputText)")

            let bad = try await api.certificateChallenge(tenant, session: session, host: "127.0.0.1", port: server.port + 1, names: names)
            #expect(bad.credential?["identityId"] as? String == unaccepted, "\(bad)")
            let badCredential = try #require(bad.credential)
            let badResult = try await curl(server: server, credential: badCredential)
            #expect(badResult.status != 0, "the server must refuse a client certificate from a CA it does not accept")

            let none = try await curl(server: server, credential: nil)
            #expect(none.status != 0, "and a client without a certificate")
        }
    }

    @Test func aChainCapturedFromTheLiveServerIsJudged() async throws {
        let server = try await TLSServer.start(pki: pki)
        defer { server.stop() }
        // The chain as the server sends it, captured by a client that completes the handshake.
        let transcript = try await ChildProcess.runDetached(
            TestPKI.opensslPath,
            [
                "s_client", "-connect", "127.0.0.1:\(server.port)", "-showcerts", "-servername", "localhost",
                "-cert", pki.clientA.leaf.certificatePath, "-key", pki.clientA.leaf.keyPath,
            ]
        )
        let captured = try Certificate.parseChain(pem: transcript.outputText)
        #expect(captured.map(\.subject) == [pki.server.certificate.subject, pki.intermediateCA.certificate.subject])

        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.policy(tenant, rules: TLSRules.serverTrust(host: "*", trust: TLSRules.anchored([pki.rootCA.certificatePEM])))
            let session = try await api.session(tenant)
            let chain = captured.map(\.derBytes)
            let trusted = try await api.trustChallenge(tenant, session: session, host: "127.0.0.1", port: server.port, chain: chain)
            #expect(trusted.string("disposition") == "useCredential", "\(trusted)")
            #expect((trusted.evaluation?["verifiedChain"] as? [String])?.last == pki.rootCA.certificate.subject)
            let wrongName = try await api.trustChallenge(tenant, session: session, host: "intranet.example.com", port: server.port, chain: chain)
            #expect(wrongName.trustFailureCode == "hostname_mismatch")
        }
    }

    /// Runs curl against `server` with the released identity written to a temporary PKCS#12 file.
    private func curl(server: TLSServer, credential: [String: Any]?) async throws -> ChildProcess.Output {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var arguments = ["--silent", "--show-error", "--max-time", "10", "--cacert", pki.rootCA.certificatePath, "https://127.0.0.1:\(server.port)/"]
        if let credential {
            let pkcs12 = try #require((credential["pkcs12"] as? String).flatMap { Data(base64Encoded: $0) })
            let passphrase = try #require(credential["passphrase"] as? String)
            let file = directory.appendingPathComponent("identity.p12")
            try pkcs12.write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
            arguments = ["--cert-type", "P12", "--cert", "\(file.path):\(passphrase)"] + arguments
        }
        return try await ChildProcess.runDetached("/usr/bin/curl", arguments)
    }
}

/// An `openssl s_server` on a loopback port that requires a client certificate from the test
/// client CAs and serves its status page (`-www`).
struct TLSServer {
    let process: BackgroundProcess
    let port: Int

    static func start(pki: TestPKI) async throws -> TLSServer {
        var lastError: (any Error)?
        // The free port is found by binding and closing; another process may take it in between.
        for _ in 0..<5 {
            let port = try LoopbackPort.free()
            let process = try BackgroundProcess(
                TestPKI.opensslPath,
                [
                    "s_server", "-accept", "127.0.0.1:\(port)", "-www", "-Verify", "1", "-verify_return_error",
                    "-CAfile", pki.clientCABundlePath,
                    "-cert", pki.server.certificatePath, "-key", pki.server.keyPath, "-cert_chain", pki.intermediateCA.certificatePath,
                ]
            )
            let server = TLSServer(process: process, port: port)
            do {
                try await server.waitUntilAccepting()
                return server
            } catch {
                lastError = error
                server.stop()
            }
        }
        throw lastError ?? TLSServerError.notAccepting
    }

    /// Polls the port until a TCP connection succeeds (at most 10 s).
    func waitUntilAccepting() async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            guard !process.hasExited() else { throw TLSServerError.exited }
            if Self.connects(to: port) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TLSServerError.notAccepting
    }

    func stop() {
        process.terminate()
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func connects(to port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}

enum TLSServerError: Error {
    case exited
    case notAccepting
}
