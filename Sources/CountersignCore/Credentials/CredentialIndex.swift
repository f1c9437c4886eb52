public import Foundation

/// A tenant's credentials (its own and every client's `permanent` ones), indexed once when its
/// state is loaded: a large tenant holds tens of thousands, and a decision found its remembered
/// credential, or those fitting a space, by scanning (and first copying) them all.
public struct CredentialIndex: Sendable {
    public let all: [Credential]
    /// The folded host of each of `all`: folding costs more than the rest of indexing together,
    /// so an index updated with a few changes keeps the others' (``updating(_:removing:)``).
    private let hosts: [String]
    private let positionsByID: [UUID: Int]
    /// By folded host, as ``CredentialAttributes/fits(_:)`` compares it with the space's.
    private let positionsByHost: [String: [Int]]

    public init(_ credentials: [Credential]) {
        self.init(credentials, hosts: credentials.map(\.attributes.normalized.host))
    }

    private init(_ credentials: [Credential], hosts: [String]) {
        var byID: [UUID: Int] = [:]
        var byHost: [String: [Int]] = [:]
        byID.reserveCapacity(credentials.count)
        for (position, credential) in credentials.enumerated() {
            byID[credential.id] = position
            byHost[hosts[position], default: []].append(position)
        }
        self.init(credentials, hosts: hosts, byID: byID, byHost: byHost)
    }

    private init(_ credentials: [Credential], hosts: [String], byID: [UUID: Int], byHost: [String: [Int]]) {
        all = credentials
        self.hosts = hosts
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
        var hosts = self.hosts
        guard removed.isEmpty else {
            // Positions move: indexed again, from the hosts already folded.
            for credential in changed where !removed.contains(credential.id) {
                let host = credential.attributes.normalized.host
                if let position = positionsByID[credential.id] {
                    (credentials[position], hosts[position]) = (credential, host)
                } else {
                    credentials.append(credential)
                    hosts.append(host)
                }
            }
            let kept = credentials.indices.filter { !removed.contains(credentials[$0].id) }
            return CredentialIndex(kept.map { credentials[$0] }, hosts: kept.map { hosts[$0] })
        }
        // Positions stay: the maps are patched, not built again.
        var byID = positionsByID
        var byHost = positionsByHost
        for credential in changed {
            let host = credential.attributes.normalized.host
            if let position = byID[credential.id] {
                if hosts[position] != host {
                    byHost[hosts[position]]?.removeAll { $0 == position }
                    if byHost[hosts[position]]?.isEmpty == true { byHost[hosts[position]] = nil }
                    byHost[host, default: []].append(position)
                    byHost[host]?.sort()
                }
                (credentials[position], hosts[position]) = (credential, host)
            } else {
                byID[credential.id] = credentials.count
                byHost[host, default: []].append(credentials.count)
                credentials.append(credential)
                hosts.append(host)
            }
        }
        return CredentialIndex(credentials, hosts: hosts, byID: byID, byHost: byHost)
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
