import CountersignCore
import CountersignCrypto
import CountersignService
import CountersignStorage
import Foundation
import Hummingbird
import Logging
import NIOPosix

/// The admin API for client identities (TLS client certificates with their keys). Uploads are
/// checked (the key must belong to the certificate) and the key sealed like any secret; no
/// response ever carries the key.
struct IdentityController: Sendable {
    let identities: IdentityStore
    let cache: DecisionStateCache
    let body: JSONBody

    /// An identity to upload: a PKCS#12 file with its password, or a PEM private key with its
    /// PEM certificate chain (leaf first, or anywhere: the leaf is the certificate of the key).
    struct UploadIdentity: Codable {
        /// The PKCS#12 file, base64.
        var pkcs12: String?
        /// The PKCS#12 password (may be empty).
        var password: String?
        var privateKey: String?
        var certificateChain: String?
        /// For an encrypted PEM private key.
        var passphrase: String?
        var label: String?
    }

    func addRoutes(to group: RouterGroup<AdminRequestContext>) {
        group.post { request, context in
            let input = try await body.decode(UploadIdentity.self, from: request)
            if let label = input.label { try Validation.text(label, field: "label", maxLength: 200) }
            // Key derivation runs as many iterations as the uploaded file asks for: on a thread of
            // NIO's blocking pool, so that a costly file never stalls the cooperative pool that
            // answers every tenant's challenges.
            let identity = try await NIOThreadPool.singleton.runIfActive { try Self.identity(from: input) }
            // Read before the identity is stored: a failure after the commit would answer an error
            // for an upload that was kept.
            let now = try await databaseNow(context.tenantID)
            let created = try await identities.create(tenantID: context.tenantID, identity: identity, label: input.label, actor: context.actor)
            cache.forgetTenant(context.tenantID)
            context.logger.notice(
                "client identity uploaded",
                metadata: ["identity": "\(created.id.text)", "sha256": "\(created.certificate?.sha256Fingerprint ?? "")"]
            )
            return try JSONResponse.make(IdentityView(created, now: now), status: .created)
        }
        group.get { request, context in
            let page = try QueryParameters(request, accepting: QueryParameters.paging).page()
            let list = try await identities.list(tenantID: context.tenantID, limit: page.limit, after: page.cursor)
            let now = try await databaseNow(context.tenantID)
            return try JSONResponse.make(ListPage("identities", list) { IdentityView($0, now: now) })
        }
        group.get(":identityId") { _, context in
            guard let identity = try await identities.get(tenantID: context.tenantID, id: try context.parameters.uuid("identityId")) else {
                throw CountersignError(.notFound, "no such identity")
            }
            return try JSONResponse.make(IdentityView(identity, now: try await databaseNow(context.tenantID)))
        }
        group.delete(":identityId") { _, context in
            guard try await identities.delete(tenantID: context.tenantID, id: try context.parameters.uuid("identityId"), actor: context.actor) else {
                throw CountersignError(.notFound, "no such identity")
            }
            cache.forgetTenant(context.tenantID)
            return Response(status: .noContent)
        }
    }

    /// The time an identity's `state` is told at: the database's, by which decisions judge whether
    /// an identity may be released (`DecisionService`), so that a listing never calls valid an
    /// identity the decisions refuse as expired because this instance's clock runs behind.
    private func databaseNow(_ tenantID: UUID) async throws -> Date {
        try await cache.settings(tenantID).databaseNow
    }

    /// Parses the upload into an identity whose key matches its certificate.
    static func identity(from input: UploadIdentity) throws -> ClientIdentity {
        switch (input.pkcs12, input.privateKey, input.certificateChain) {
        case (let pkcs12?, nil, nil):
            guard input.passphrase == nil else {
                throw CountersignError(.invalidIdentity, "a PKCS#12 upload takes 'password', not 'passphrase'")
            }
            guard let password = input.password else {
                throw CountersignError(.missingField, "'password' is required with 'pkcs12' (send \"\" for a file without one)")
            }
            guard pkcs12.utf8.count <= (ClientIdentity.maximumPKCS12ByteCount + 2) / 3 * 4 else {
                throw CountersignError(.malformedPKCS12, "'pkcs12' is larger than \(ClientIdentity.maximumPKCS12ByteCount) bytes")
            }
            guard let bytes = Data(base64Encoded: pkcs12), !bytes.isEmpty else {
                throw CountersignError(.malformedPKCS12, "'pkcs12' is not base64")
            }
            do {
                return try ClientIdentity(pkcs12: [UInt8](bytes), password: password)
            } catch {
                throw CountersignError(error)
            }
        case (nil, let key?, let chain?):
            guard input.password == nil else {
                throw CountersignError(.invalidIdentity, "a PEM upload takes 'passphrase' (for an encrypted key), not 'password'")
            }
            do {
                return try ClientIdentity(privateKeyPEM: key, certificateChainPEM: chain, passphrase: input.passphrase)
            } catch {
                throw CountersignError(error)
            }
        default:
            throw CountersignError(.invalidIdentity, "send either 'pkcs12' with 'password', or 'privateKey' with 'certificateChain'")
        }
    }
}

// The upload carries a private key and its passwords: never in a log line, nor in a mirror.
extension IdentityController.UploadIdentity: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String { "UploadIdentity(\(pkcs12 != nil ? "pkcs12" : "pem"), label: \(label ?? "none"), key: redacted)" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: ["label": label ?? "none", "key": "redacted"], displayStyle: .struct) }
}

/// An identity as admins see it: its certificate and state, never its key.
struct IdentityView: Encodable {
    var credential: Credential
    /// When `state` is judged: the database's clock, as decisions judge it.
    var now: Date

    init(_ credential: Credential, now: Date) {
        self.credential = credential
        self.now = now
    }

    enum CodingKeys: String, CodingKey {
        case id, label, subject, issuer, serialNumber, notBefore, notAfter, sha256Fingerprint, keyAlgorithm, chainSubjects, state
        case createdAt
    }

    func encode(to encoder: any Encoder) throws {
        guard let certificate = credential.certificate else {
            throw CountersignError(.internalError, "an identity without its certificate")
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(credential.id, forKey: .id)
        try container.encode(credential.label, forKey: .label)
        try container.encode(certificate.subject, forKey: .subject)
        try container.encode(certificate.issuer, forKey: .issuer)
        try container.encode(certificate.serialNumber, forKey: .serialNumber)
        try container.encode(certificate.notBefore, forKey: .notBefore)
        try container.encode(certificate.notAfter, forKey: .notAfter)
        try container.encode(certificate.sha256Fingerprint, forKey: .sha256Fingerprint)
        try container.encode(certificate.keyAlgorithm, forKey: .keyAlgorithm)
        try container.encode(certificate.chainSubjects, forKey: .chainSubjects)
        try container.encode(certificate.state(at: now), forKey: .state)
        try container.encode(credential.createdAt, forKey: .createdAt)
    }
}
