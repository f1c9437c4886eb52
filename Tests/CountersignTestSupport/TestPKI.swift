public import CountersignCrypto
import Foundation
import Synchronization

/// A throwaway public-key infrastructure for tests, made with the `openssl` command line.
///
/// Everything is EC P-256 (fast to generate) except client identity B, which is RSA-2048 so
/// that both key types are covered. Layout:
///
/// ```
/// rootCA ── intermediateCA ─┬─ server           localhost, 127.0.0.1, ::1; serverAuth
///                           ├─ expired          like server, valid 2020-01-01 to 2021-01-01
///                           ├─ notYetValid      like server, valid from 2099-01-01
///                           ├─ otherName        other.example.com; serverAuth
///                           ├─ wildcard         *.example.com; serverAuth
///                           └─ clientAuthOnly   localhost; clientAuth only (no serverAuth)
/// selfSigned                                    localhost; serverAuth; its own issuer
/// otherRootCA ── otherRootServer                localhost, 127.0.0.1; serverAuth
/// intermediateCA ── caLeaf                       localhost; serverAuth, but itself a CA (cA=TRUE)
/// clientCAA ─┬─ clientA                         clientAuth, EC P-256
///            └─ expiredClient                   clientAuth, valid 2020-01-01 to 2021-01-01
/// clientCAB ─── clientB                         clientAuth, RSA-2048
/// ```
///
/// Files live in `directory`: for each name `N`, `N.pem` (certificate), `N.key` (unencrypted
/// PKCS#8 key), `N-chain.pem` (the certificate then its intermediates, as a server or client
/// sends them, never the root), and for client identities `N.p12` protected by
/// `TestPKI.pkcs12Password`. `client-cas.pem` holds both client CAs (for
/// `openssl s_server -Verify 1 -CAfile`).
public struct TestPKI: Sendable {
    /// A certificate authority.
    public struct Authority: Sendable {
        /// File name stem, e.g. `root-ca`.
        public let name: String
        public let certificatePath: String
        public let keyPath: String
        public let certificatePEM: String
        public let certificate: Certificate

        public var certificateDER: [UInt8] { certificate.derBytes }
        /// DER of the subject name, as a TLS server lists it among acceptable CAs.
        public var subjectDER: [UInt8] { certificate.subjectDER }
    }

    /// An end-entity certificate with its key and the chain it is presented with.
    public struct Leaf: Sendable {
        /// File name stem, e.g. `server`.
        public let name: String
        public let certificatePath: String
        public let keyPath: String
        /// The certificate followed by its intermediates (not the root).
        public let chainPath: String
        public let certificatePEM: String
        public let keyPEM: String
        public let chainPEM: String
        public let certificate: Certificate
        /// The presented chain, leaf first.
        public let chain: [Certificate]

        public var certificateDER: [UInt8] { certificate.derBytes }
        public var chainDER: [[UInt8]] { chain.map(\.derBytes) }
    }

    /// A client identity: a leaf for clientAuth plus its PKCS#12 file.
    public struct Identity: Sendable {
        public let leaf: Leaf
        /// The CA that issued it.
        public let issuer: Authority
        /// The leaf, its key and the issuing CA, protected by `password`.
        public let pkcs12Path: String
        public let pkcs12: [UInt8]
        public let password: String

        public var keyPEM: String { leaf.keyPEM }
        public var chainPEM: String { leaf.chainPEM }
        public var certificate: Certificate { leaf.certificate }
    }

    /// The password of every PKCS#12 file made here.
    public static let pkcs12Password = "countersign-test-p12"

    public let directory: String
    public let rootCA: Authority
    public let intermediateCA: Authority
    public let otherRootCA: Authority
    public let clientCAA: Authority
    public let clientCAB: Authority

    public let server: Leaf
    public let expired: Leaf
    public let notYetValid: Leaf
    public let otherName: Leaf
    public let wildcard: Leaf
    public let clientAuthOnly: Leaf
    public let selfSigned: Leaf
    public let otherRootServer: Leaf
    public let caLeaf: Leaf

    public let clientA: Identity
    public let clientB: Identity
    public let expiredClient: Identity

    /// Both client CAs in one PEM file, the `-CAfile` of a server that asks for client certificates.
    public let clientCABundlePath: String

    private static let cache = Mutex<TestPKI?>(nil)

    /// One PKI per test process, made on first use (about half a second) in a fresh temporary
    /// directory that is removed when the process exits, unless `COUNTERSIGN_KEEP_TEST_PKI` is set.
    /// Made, and waited for, on threads of their own (see ``TestDatabase/onOwnThread(_:)``).
    public static func shared() async throws -> TestPKI {
        try await TestDatabase.onOwnThread { try sharedMadeHere() }
    }

    private static func sharedMadeHere() throws -> TestPKI {
        try cache.withLock { (cached: inout TestPKI?) throws -> TestPKI in
            if let cached { return cached }
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("countersign-test-pki-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)")
                .path
            let pki: TestPKI
            do {
                pki = try make(in: directory)
            } catch {
                try? FileManager.default.removeItem(atPath: directory)
                throw error
            }
            if ProcessInfo.processInfo.environment["COUNTERSIGN_KEEP_TEST_PKI"] == nil {
                sharedDirectory.withLock { $0 = directory }
                atexit { TestPKI.removeSharedDirectory() }
            }
            cached = pki
            return pki
        }
    }

    private static let sharedDirectory = Mutex<String?>(nil)

    private static func removeSharedDirectory() {
        guard let directory = sharedDirectory.withLock({ $0 }) else { return }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Makes a complete PKI in `directory` (created if needed; existing files are overwritten).
    public static func make(in directory: String) throws -> TestPKI {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let maker = Maker(directory: directory)

        let rootCA = try maker.authority("root-ca", subject: "Countersign Test Root CA", issuer: nil, pathLength: 1)
        let intermediateCA = try maker.authority("intermediate-ca", subject: "Countersign Test Intermediate CA", issuer: rootCA, pathLength: 0)
        let otherRootCA = try maker.authority("other-root-ca", subject: "Countersign Unrelated Root CA", issuer: nil, pathLength: nil)
        let clientCAA = try maker.authority("client-ca-a", subject: "Countersign Test Client CA A", issuer: nil, pathLength: nil)
        let clientCAB = try maker.authority("client-ca-b", subject: "Countersign Test Client CA B", issuer: nil, pathLength: nil)

        let localhostSAN = "DNS:localhost,IP:127.0.0.1,IP:::1"
        let server = try maker.leaf(
            "server",
            subject: "localhost",
            san: localhostSAN,
            usage: .server,
            issuer: intermediateCA,
            intermediates: [intermediateCA]
        )
        let expired = try maker.leaf(
            "expired",
            subject: "localhost",
            san: localhostSAN,
            usage: .server,
            issuer: intermediateCA,
            intermediates: [intermediateCA],
            validity: .fixed(start: "20200101000000Z", end: "20210101000000Z")
        )
        let notYetValid = try maker.leaf(
            "not-yet-valid",
            subject: "localhost",
            san: localhostSAN,
            usage: .server,
            issuer: intermediateCA,
            intermediates: [intermediateCA],
            validity: .fixed(start: "20990101000000Z", end: "21000101000000Z")
        )
        let otherName = try maker.leaf(
            "other-name",
            subject: "other.example.com",
            san: "DNS:other.example.com",
            usage: .server,
            issuer: intermediateCA,
            intermediates: [intermediateCA]
        )
        let wildcard = try maker.leaf(
            "wildcard",
            subject: "*.example.com",
            san: "DNS:*.example.com",
            usage: .server,
            issuer: intermediateCA,
            intermediates: [intermediateCA]
        )
        let clientAuthOnly = try maker.leaf(
            "client-auth-only",
            subject: "localhost",
            san: localhostSAN,
            usage: .client,
            issuer: intermediateCA,
            intermediates: [intermediateCA]
        )
        let selfSigned = try maker.leaf("self-signed", subject: "localhost", san: localhostSAN, usage: .server, issuer: nil, intermediates: [])
        let caLeaf = try maker.leaf(
            "ca-leaf", subject: "localhost", san: localhostSAN, usage: .server, issuer: intermediateCA, intermediates: [intermediateCA], isCA: true
        )
        let otherRootServer = try maker.leaf(
            "other-root-server",
            subject: "localhost",
            san: "DNS:localhost,IP:127.0.0.1",
            usage: .server,
            issuer: otherRootCA,
            intermediates: []
        )

        // Client chains carry their CA so that a PKCS#12 export holds a non-empty chain.
        let clientA = try maker.identity(
            maker.leaf("client-a", subject: "Countersign Test Client A", san: nil, usage: .client, issuer: clientCAA, intermediates: [clientCAA]),
            issuer: clientCAA
        )
        let clientB = try maker.identity(
            maker.leaf(
                "client-b",
                subject: "Countersign Test Client B",
                san: nil,
                usage: .client,
                issuer: clientCAB,
                intermediates: [clientCAB],
                keyType: .rsa2048
            ),
            issuer: clientCAB
        )
        let expiredClient = try maker.identity(
            maker.leaf(
                "expired-client",
                subject: "Countersign Test Expired Client",
                san: nil,
                usage: .client,
                issuer: clientCAA,
                intermediates: [clientCAA],
                validity: .fixed(start: "20200101000000Z", end: "20210101000000Z")
            ),
            issuer: clientCAA
        )

        let clientCABundlePath = maker.path("client-cas.pem")
        try (clientCAA.certificatePEM + clientCAB.certificatePEM).write(toFile: clientCABundlePath, atomically: true, encoding: .utf8)

        return TestPKI(
            directory: directory,
            rootCA: rootCA,
            intermediateCA: intermediateCA,
            otherRootCA: otherRootCA,
            clientCAA: clientCAA,
            clientCAB: clientCAB,
            server: server,
            expired: expired,
            notYetValid: notYetValid,
            otherName: otherName,
            wildcard: wildcard,
            clientAuthOnly: clientAuthOnly,
            selfSigned: selfSigned,
            otherRootServer: otherRootServer,
            caLeaf: caLeaf,
            clientA: clientA,
            clientB: clientB,
            expiredClient: expiredClient,
            clientCABundlePath: clientCABundlePath
        )
    }

    /// Runs `openssl` with `arguments` and returns what it printed on standard output.
    ///
    /// - Throws: `TestPKIError` with the command and its standard error when it exits non-zero.
    @discardableResult
    public static func runOpenSSL(_ arguments: [String], workingDirectory: String? = nil, standardInput: [UInt8]? = nil) throws -> [UInt8] {
        // Not Foundation's Process, which can wait forever on Linux (see ChildProcess).
        let result = try ChildProcess.run(opensslPath, arguments, workingDirectory: workingDirectory, standardInput: standardInput)
        guard result.status == 0 else {
            throw TestPKIError(command: "openssl " + arguments.joined(separator: " "), status: result.status, output: result.errorText)
        }
        return result.standardOutput
    }

    /// The `openssl` executable: `$OPENSSL` when set, else the first on `$PATH`, else `/usr/bin/openssl`.
    public static var opensslPath: String {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["OPENSSL"], !path.isEmpty { return path }
        for directory in (environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/openssl"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return "/usr/bin/openssl"
    }
}

/// An `openssl` command of `TestPKI` failed.
public struct TestPKIError: Error, CustomStringConvertible {
    public let command: String
    public let status: Int32
    public let output: String

    public var description: String {
        "\(command) exited with \(status): \(output)"
    }
}

// MARK: - Making the files

private struct Maker {
    enum Usage {
        case server
        case client
    }

    enum KeyType {
        case p256
        case rsa2048

        var arguments: [String] {
            switch self {
            case .p256: ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
            case .rsa2048: ["-newkey", "rsa:2048"]
            }
        }
    }

    enum Validity {
        case days(Int)
        // `openssl x509 -req` (OpenSSL 3.0) cannot backdate, so these go through `openssl ca`.
        case fixed(start: String, end: String)
    }

    let directory: String

    func path(_ file: String) -> String {
        (directory as NSString).appendingPathComponent(file)
    }

    func authority(_ name: String, subject: String, issuer: TestPKI.Authority?, pathLength: Int?) throws -> TestPKI.Authority {
        let constraints = pathLength.map { "critical,CA:TRUE,pathlen:\($0)" } ?? "critical,CA:TRUE"
        let extensions =
            [
                "basicConstraints = \(constraints)",
                "keyUsage = critical,keyCertSign,cRLSign",
                "subjectKeyIdentifier = hash",
            ] + (issuer == nil ? [] : ["authorityKeyIdentifier = keyid:always"])
        try issue(name, subject: "/O=Countersign Tests/CN=\(subject)", extensions: extensions, issuer: issuer, keyType: .p256, validity: .days(3650))
        let pem = try String(contentsOfFile: path("\(name).pem"), encoding: .utf8)
        return TestPKI.Authority(
            name: name,
            certificatePath: path("\(name).pem"),
            keyPath: path("\(name).key"),
            certificatePEM: pem,
            certificate: try Certificate(pem: pem)
        )
    }

    func leaf(
        _ name: String,
        subject: String,
        san: String?,
        usage: Usage,
        issuer: TestPKI.Authority?,
        intermediates: [TestPKI.Authority],
        keyType: KeyType = .p256,
        validity: Validity = .days(825),
        isCA: Bool = false
    ) throws -> TestPKI.Leaf {
        var extensions = [
            isCA ? "basicConstraints = critical,CA:TRUE" : "basicConstraints = critical,CA:FALSE",
            (keyType == .rsa2048 ? "keyUsage = critical,digitalSignature,keyEncipherment" : "keyUsage = critical,digitalSignature") + (isCA ? ",keyCertSign" : ""),
            "extendedKeyUsage = \(usage == .server ? "serverAuth" : "clientAuth")",
            "subjectKeyIdentifier = hash",
        ]
        if issuer != nil { extensions.append("authorityKeyIdentifier = keyid:always") }
        if let san { extensions.append("subjectAltName = \(san)") }
        try issue(name, subject: "/O=Countersign Tests/CN=\(subject)", extensions: extensions, issuer: issuer, keyType: keyType, validity: validity)

        let pem = try String(contentsOfFile: path("\(name).pem"), encoding: .utf8)
        let chainPEM = pem + intermediates.map(\.certificatePEM).joined()
        try chainPEM.write(toFile: path("\(name)-chain.pem"), atomically: true, encoding: .utf8)
        return TestPKI.Leaf(
            name: name,
            certificatePath: path("\(name).pem"),
            keyPath: path("\(name).key"),
            chainPath: path("\(name)-chain.pem"),
            certificatePEM: pem,
            keyPEM: try String(contentsOfFile: path("\(name).key"), encoding: .utf8),
            chainPEM: chainPEM,
            certificate: try Certificate(pem: pem),
            chain: try Certificate.parseChain(pem: chainPEM)
        )
    }

    func identity(_ leaf: TestPKI.Leaf, issuer: TestPKI.Authority) throws -> TestPKI.Identity {
        let p12Path = path("\(leaf.name).p12")
        // OpenSSL 3 defaults: AES-256-CBC with PBKDF2 for key and certificates, SHA-256 MAC.
        try TestPKI.runOpenSSL([
            "pkcs12", "-export",
            "-inkey", leaf.keyPath,
            "-in", leaf.certificatePath,
            "-certfile", issuer.certificatePath,
            "-name", leaf.name,
            "-passout", "pass:\(TestPKI.pkcs12Password)",
            "-out", p12Path,
        ])
        return TestPKI.Identity(
            leaf: leaf,
            issuer: issuer,
            pkcs12Path: p12Path,
            pkcs12: [UInt8](try Data(contentsOf: URL(fileURLWithPath: p12Path))),
            password: TestPKI.pkcs12Password
        )
    }

    /// Writes `name.key` and `name.pem`: self-signed when `issuer` is nil.
    private func issue(
        _ name: String,
        subject: String,
        extensions: [String],
        issuer: TestPKI.Authority?,
        keyType: KeyType,
        validity: Validity
    ) throws {
        let config = path("\(name).cnf")
        let keyPath = path("\(name).key")
        let certificatePath = path("\(name).pem")
        try configuration(extensions: extensions, caDirectory: path("\(name)-ca")).write(toFile: config, atomically: true, encoding: .utf8)
        let serial = randomSerial()

        guard let issuer else {
            guard case .days(let days) = validity else { preconditionFailure("self-signed certificates are never backdated here") }
            try TestPKI.runOpenSSL(
                [
                    "req", "-x509", "-new", "-config", config, "-extensions", "ext", "-subj", subject, "-sha256", "-days", "\(days)", "-set_serial",
                    "0x\(serial)", "-noenc", "-keyout", keyPath, "-out", certificatePath,
                ]
                    + keyType.arguments
            )
            return
        }

        let request = path("\(name).csr")
        try TestPKI.runOpenSSL(
            ["req", "-new", "-config", config, "-subj", subject, "-noenc", "-keyout", keyPath, "-out", request] + keyType.arguments
        )
        switch validity {
        case .days(let days):
            try TestPKI.runOpenSSL([
                "x509", "-req", "-in", request, "-CA", issuer.certificatePath, "-CAkey", issuer.keyPath,
                "-set_serial", "0x\(serial)", "-sha256", "-days", "\(days)",
                "-extfile", config, "-extensions", "ext", "-out", certificatePath,
            ])
        case .fixed(let start, let end):
            let database = path("\(name)-ca")
            try FileManager.default.createDirectory(atPath: database, withIntermediateDirectories: true)
            try "".write(toFile: (database as NSString).appendingPathComponent("index.txt"), atomically: true, encoding: .utf8)
            try "\(serial)\n".write(toFile: (database as NSString).appendingPathComponent("serial"), atomically: true, encoding: .utf8)
            try TestPKI.runOpenSSL([
                "ca", "-batch", "-config", config, "-name", "ca_default",
                "-cert", issuer.certificatePath, "-keyfile", issuer.keyPath,
                "-in", request, "-out", certificatePath, "-notext", "-preserveDN", "-md", "sha256",
                "-startdate", start, "-enddate", end, "-extensions", "ext",
            ])
        }
    }

    /// One file serving `req`, `x509 -extfile` and `ca`: the request defaults, the `ext`
    /// section with this certificate's extensions, and a throwaway CA database.
    private func configuration(extensions: [String], caDirectory: String) -> String {
        """
        [ req ]
        distinguished_name = req_dn
        utf8 = yes
        string_mask = utf8only

        [ req_dn ]

        [ ca_default ]
        dir = \(caDirectory)
        database = $dir/index.txt
        new_certs_dir = $dir
        serial = $dir/serial
        default_md = sha256
        policy = policy_any
        unique_subject = no
        copy_extensions = none
        email_in_dn = no

        [ policy_any ]
        organizationName = optional
        commonName = supplied

        [ ext ]
        \(extensions.joined(separator: "\n"))

        """
    }

    // 16 random bytes with the top bit clear: a positive serial that is unique per certificate.
    private func randomSerial() -> String {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255) }
        bytes[0] &= 0x7f
        bytes[0] |= 0x10
        return bytes.map { String(format: "%02x", $0) }.joined()
    }
}
