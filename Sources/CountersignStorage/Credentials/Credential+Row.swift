import CountersignCore
import CountersignPostgres
import Foundation

extension Credential {
    static let columns = """
        c.id, c.tenant_id, c.kind, c.owner, c.owner_client_id, c.owner_session_id, c.submitted_by_client, c.host, c.port,
        c.protocol, c.realm, c.path, c.authentication_method, c.is_proxy, c.account, c.domain, c.label, c.secret_version,
        c.created_at, c.updated_at, c.exportable, \(identityColumn)
        """

    /// A client identity's certificate as one JSON column (NULL for passwords), so that every
    /// query selecting `columns` reads identities whole.
    static let identityColumn = """
        (SELECT jsonb_build_object('subject', i.subject, 'issuer', i.issuer, 'serialNumber', i.serial_number,
            'notBefore', extract(epoch FROM i.not_before), 'notAfter', extract(epoch FROM i.not_after),
            'sha256Fingerprint', i.sha256_fingerprint, 'keyAlgorithm', i.key_algorithm, 'chainSubjects', i.chain_subjects,
            'issuerNames', i.issuer_names)::text
         FROM client_identities i WHERE i.credential_id = c.id) AS identity
        """

    private static let identityDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    init(row: PostgresRow) throws {
        let owner: CredentialOwner
        switch try row.decode("owner", as: String.self) {
        case "session":
            owner = .session(try row.decode("owner_session_id"), clientID: try row.decode("owner_client_id"))
        case "client":
            owner = .client(try row.decode("owner_client_id"))
        default:
            owner = .tenant(submittedBy: try row.decode("submitted_by_client"))
        }
        let method: String? = try row.decode("authentication_method")
        let identity: String? = try row.decode("identity")
        self.init(
            id: try row.decode("id"),
            tenantID: try row.decode("tenant_id"),
            kind: try row.decodeEnum("kind"),
            attributes: CredentialAttributes(
                host: try row.decode("host"),
                port: try row.decode("port"),
                protocolName: try row.decode("protocol"),
                realm: try row.decode("realm"),
                path: try row.decode("path"),
                authenticationMethod: method.map(AuthenticationMethod.init(rawValue:)),
                isProxy: try row.decode("is_proxy"),
                account: try row.decode("account")
            ),
            domain: try row.decode("domain"),
            label: try row.decode("label"),
            owner: owner,
            secretVersion: try row.decode("secret_version"),
            createdAt: try row.decode("created_at"),
            updatedAt: try row.decode("updated_at"),
            certificate: try identity.map { try Self.identityDecoder.decode(IdentityCertificate.self, from: Data($0.utf8)) },
            exportable: try row.decode("exportable")
        )
    }
}

extension CredentialOwner {
    /// The owner columns: `owner`, `owner_client_id`, `owner_session_id`, `submitted_by_client`.
    var columnValues: [PostgresValue] {
        switch self {
        case .tenant(let submittedBy): [.text("tenant"), .null, .null, PostgresValue(submittedBy)]
        case .client(let clientID): [.text("client"), .text(clientID), .null, .text(clientID)]
        case .session(let sessionID, let clientID): [.text("session"), .text(clientID), .uuid(sessionID), .text(clientID)]
        }
    }
}
