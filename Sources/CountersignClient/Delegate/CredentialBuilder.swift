import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Security)
import Security
#endif

/// Turns the service's answer into the `URLCredential` URLSession takes.
enum CredentialBuilder {
    /// The credential for `answer` (a `useCredential` answer), or why there is none this client
    /// can use.
    static func credential(for answer: DecisionAnswer, challenge: ChallengeSnapshot, persistenceLimit: Persistence?) -> Result<URLCredential, Unusable> {
        var persistence = answer.persistence
        if let persistenceLimit, persistenceLimit < persistence { persistence = persistenceLimit }
        let urlPersistence = urlPersistence(persistence)

        if challenge.space.authenticationMethod == .serverTrust {
            // A `useCredential` answer to a server-trust challenge is the service's statement that
            // the chain it was shown is trusted; the credential is the challenge's own trust.
            #if canImport(Security)
            guard let trust = challenge.trustCredential else { return .failure(Unusable("the challenge carries no server trust")) }
            return .success(trust.value)
            #else
            return .failure(Unusable("server-trust credentials need Apple's Security framework, which FoundationNetworking does not have"))
            #endif
        }
        guard let released = answer.credential else {
            return .failure(Unusable("the answer is useCredential without a credential"))
        }
        switch released.kind {
        case .password:
            guard let user = released.user, let password = released.password else {
                return .failure(Unusable("the password credential lacks its user or password"))
            }
            return .success(URLCredential(user: accountName(user, domain: released.domain, method: challenge.space.authenticationMethod), password: password, persistence: urlPersistence))
        case .clientIdentity:
            #if canImport(Security)
            guard let pkcs12 = released.pkcs12, let passphrase = released.passphrase else {
                return .failure(Unusable("the client identity lacks its PKCS#12 or passphrase"))
            }
            guard let credential = identityCredential(pkcs12: pkcs12, passphrase: passphrase, persistence: urlPersistence) else {
                return .failure(Unusable("the client identity's PKCS#12 could not be imported"))
            }
            return .success(credential)
            #else
            return .failure(Unusable("client identities need Apple's Security framework, which FoundationNetworking does not have"))
            #endif
        default:
            return .failure(Unusable("the credential kind '\(released.kind)' is not known to this client"))
        }
    }

    /// Why an answer's credential cannot be used here. Never holds a secret.
    struct Unusable: Error, Hashable, Sendable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// The contract's persistence as URLSession's.
    static func urlPersistence(_ persistence: Persistence) -> URLCredential.Persistence {
        switch persistence {
        case .none: .none
        case .forSession: .forSession
        case .permanent: .permanent
        case .synchronizable:
            #if canImport(FoundationNetworking)
            // swift-corelibs-foundation has no synchronizable store (the case is deprecated
            // there); the nearest it keeps is permanent.
            .permanent
            #else
            .synchronizable
            #endif
        }
    }

    /// NTLM wants `DOMAIN\user` when the account has a domain.
    static func accountName(_ user: String, domain: String?, method: AuthenticationMethod) -> String {
        guard method == .ntlm, let domain, !domain.isEmpty else { return user }
        return "\(domain)\\\(user)"
    }

    #if canImport(Security)
    /// The identity in a PKCS#12, with the rest of its chain, as a client-certificate credential.
    static func identityCredential(pkcs12: Data, passphrase: String, persistence: URLCredential.Persistence) -> URLCredential? {
        var options: [String: Any] = [kSecImportExportPassphrase as String: passphrase]
        #if os(macOS)
        // macOS would otherwise add the identity and its private key to the login keychain, once
        // more on every release, whatever the persistence; iOS keeps imports in memory anyway.
        // Available from macOS 15, the package's minimum.
        options[kSecImportToMemoryOnly as String] = true
        #endif
        var imported: CFArray?
        guard SecPKCS12Import(pkcs12 as CFData, options as CFDictionary, &imported) == errSecSuccess,
            let items = imported as? [[String: Any]],
            let first = items.first,
            let identityValue = first[kSecImportItemIdentity as String]
        else { return nil }
        let identityObject = identityValue as CFTypeRef
        guard CFGetTypeID(identityObject) == SecIdentityGetTypeID() else { return nil }
        // The type id was checked just above, so this cast cannot fail.
        let identity = identityObject as! SecIdentity
        let chain = first[kSecImportItemCertChain as String] as? [SecCertificate] ?? []
        // URLCredential wants the identity plus the intermediates, without the leaf.
        return URLCredential(identity: identity, certificates: Array(chain.dropFirst()), persistence: persistence)
    }
    #endif
}
