public import Foundation

/// A tenant's credentials (its own and every client's `permanent` ones), indexed once when its
/// state is loaded: a large tenant holds tens of thousands, and a decision found its remembered
/// credential, or those fitting a space, by scanning (and first copying) them all.
public struct CredentialIndex: Sendable {
    public let all: [Credential]
    private let positionsByID: [UUID: Int]
    /// By folded host, as ``CredentialAttributes/fits(_:)`` compares it with the space's.
    private let positionsByHost: [String: [Int]]

    public init(_ credentials: [Credential]) {
        all = credentials
        var byID: [UUID: Int] = [:]
        var byHost: [String: [Int]] = [:]
        for (position, credential) in credentials.enumerated() {
            byID[credential.id] = position
            byHost[credential.attributes.normalized.host, default: []].append(position)
        }
        positionsByID = byID
        positionsByHost = byHost
    }

    public func credential(id: UUID) -> Credential? {
        positionsByID[id].map { all[$0] }
    }

    /// This index with `changed` put in (in place of their earlier forms, or added) and
    /// `removed` left out.
    public func updating(_ changed: [Credential], removing removed: Set<UUID>) -> CredentialIndex {
        var credentials = all
        var added: [Credential] = []
        for credential in changed where !removed.contains(credential.id) {
            if let position = positionsByID[credential.id] { credentials[position] = credential } else { added.append(credential) }
        }
        if !removed.isEmpty { credentials.removeAll { removed.contains($0.id) } }
        return CredentialIndex(credentials + added)
    }

    /// The credentials whose host is `host` (folded): the only ones that may fit a space of it.
    public func credentials(host: String) -> [Credential] {
        (positionsByHost[host] ?? []).map { all[$0] }
    }
}

/// The credentials one decision may use: the session's own and the tenant's.
public struct DecisionCredentials: Sendable {
    public var session: [Credential]
    public var tenant: CredentialIndex

    public init(session: [Credential], tenant: CredentialIndex) {
        self.session = session
        self.tenant = tenant
    }

    func credential(id: UUID) -> Credential? {
        session.first { $0.id == id } ?? tenant.credential(id: id)
    }

    /// Those that may fit a space of `host`, for the filter that decides which do.
    func candidates(host: String) -> [Credential] {
        session.filter { $0.attributes.normalized.host == host } + tenant.credentials(host: host)
    }

    func filter(_ isIncluded: (Credential) -> Bool) -> [Credential] {
        session.filter(isIncluded) + tenant.all.filter(isIncluded)
    }
}
