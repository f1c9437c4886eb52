/// A user name as NTLM and Negotiate clients spell it: `DOMAIN\user` (the down-level logon
/// name), `user@domain` (the user principal name), or the user alone. A client hands URLSession
/// its credential in whichever form it likes, so a retry may name the account Countersign
/// released as `user` of domain `DOMAIN` in any of them.
public struct WindowsAccountName: Sendable, Hashable {
    /// The account, without its domain.
    public var user: String
    /// The domain the name gives, if it gives one.
    public var domain: String?

    public init(_ name: String) {
        // The down-level form first: an account name may itself hold an `@` (an e-mail address).
        if let slash = name.firstIndex(of: "\\") {
            user = String(name[name.index(after: slash)...])
            domain = String(name[..<slash])
        } else if let at = name.lastIndex(of: "@") {
            user = String(name[..<at])
            domain = String(name[name.index(after: at)...])
        } else {
            user = name
            domain = nil
        }
        if domain?.isEmpty == true { domain = nil }
    }

    /// The account a credential releases: its user name, in whichever form it holds it, with
    /// the credential's domain when the name gives none.
    public init(_ name: String, domain credentialDomain: String?) {
        self.init(name)
        if domain == nil, let credentialDomain, !credentialDomain.isEmpty { domain = credentialDomain }
    }

    /// Whether this name and `other` name one account, as Windows compares them: the user
    /// case-insensitively (all of Unicode, where PostgreSQL's `lower()` folds only ASCII under
    /// the C locale), and the domain, when both give one, by its first label, so that the NetBIOS
    /// form (`CORP`) and the DNS one (`corp.example.com`) compare.
    public func names(_ other: WindowsAccountName) -> Bool {
        guard user.lowercased() == other.user.lowercased() else { return false }
        guard let domain, let otherDomain = other.domain else { return true }
        return Self.firstLabel(of: domain) == Self.firstLabel(of: otherDomain)
    }

    private static func firstLabel(of domain: String) -> String {
        String(domain.lowercased().prefix { $0 != "." })
    }
}

extension AuthenticationMethod {
    /// Methods that authenticate a Windows account, whose names compare as Windows compares
    /// them: `DOMAIN\user`, `user@domain` and `user` alike, case-insensitively.
    public var namesWindowsAccounts: Bool { self == .ntlm || self == .negotiate }
}
