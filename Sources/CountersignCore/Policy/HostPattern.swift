/// A host glob of a policy rule: `api.example.com`, `*.corp.example.com`, `10.0.0.?`, `*`.
///
/// `*` matches any run of characters, `?` exactly one (a Unicode scalar of a non-ASCII host,
/// not a byte of its UTF-8); matching ignores case and the trailing
/// dot of a fully qualified host name (`ProtectionSpace.foldedHost`). Hosts are matched in their
/// ASCII form, so an internationalized label is written in its own: `*.xn--bcher-kva.example`
/// for `*.bücher.example`, which the refusal of the latter suggests. A pattern that
/// starts with `*.` needs at least one label before the rest: `*.corp.example.com` matches
/// `a.corp.example.com` and `a.b.corp.example.com`, not `corp.example.com`.
public struct HostPattern: Hashable, Sendable, CustomStringConvertible {
    public let pattern: String
    private let lowered: [UInt8]

    public init(_ pattern: String) throws {
        // Checked before it is lower-cased: Unicode lower-cases a few letters to ASCII (the
        // Kelvin sign to a k).
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:[]*?".utf8)
        let bytes = Array(pattern.utf8)
        guard !bytes.isEmpty, bytes.count <= 253, bytes.allSatisfy(allowed.contains) else {
            let suggestion = Self.asciiLabels(of: pattern).map { "; internationalized labels in their ASCII form, as hosts are compared: '\(Self.quoted($0))'" }
            throw CountersignError(
                .invalidHostPattern,
                "'\(Self.quoted(pattern))' is not a host glob: use letters, digits, '-', '.', ':', '*' and '?', at most 253 characters\(suggestion ?? "")"
            )
        }
        let lowered = bytes.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }
        guard !pattern.contains("**"), HostShape.isWellFormed(lowered, wildcards: true), lowered.last != UInt8(ascii: ".") else {
            throw CountersignError(
                .invalidHostPattern,
                "'\(Self.quoted(pattern))' is not a host glob: no '**', no leading, trailing or double '.', no port, and ':' or brackets only in an IPv6 address"
            )
        }
        self.pattern = pattern
        // In brackets, as hosts are compared (`ProtectionSpace.foldedHost`): `fe80::*` is `[fe80::*]`.
        let isBareIPv6 = lowered.first != UInt8(ascii: "[") && lowered.contains(UInt8(ascii: ":"))
        self.lowered = isBareIPv6 ? [UInt8(ascii: "[")] + lowered + [UInt8(ascii: "]")] : lowered
    }

    public var description: String { pattern }

    /// `pattern` with each internationalized label in its ASCII form
    /// (`ProtectionSpace.asciiForm(ofHost:)`); `nil` when it has none, or has no such label. A
    /// label that mixes a wildcard with other characters has none: its ASCII form encodes it whole.
    private static func asciiLabels(of pattern: String) -> String? {
        guard pattern.utf8.contains(where: { $0 >= 0x80 }) else { return nil }
        var labels: [String] = []
        for label in pattern.split(separator: ".", omittingEmptySubsequences: false) {
            guard label.utf8.contains(where: { $0 >= 0x80 }) else {
                labels.append(String(label))
                continue
            }
            let ascii = ProtectionSpace.asciiForm(ofHost: String(label))
            guard !label.contains("*"), !label.contains("?"), ascii.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
            labels.append(ascii)
        }
        return labels.joined(separator: ".")
    }

    /// The start of a refused pattern, enough to find it, for an error message of bounded size.
    private static func quoted(_ pattern: String) -> String {
        pattern.unicodeScalars.count <= 64 ? pattern : String(String.UnicodeScalarView(pattern.unicodeScalars.prefix(64))) + "…"
    }

    /// A host folded (`ProtectionSpace.foldedHost`) and taken apart once, to be matched against
    /// many patterns: a policy of a thousand rules folded the host again for each.
    public struct Subject: Sendable {
        fileprivate let ascii: [UInt8]?
        fileprivate let scalars: [Unicode.Scalar]

        /// `host` as `ProtectionSpace.foldedHost` returns it (a normalized space's).
        public init(folded host: String) {
            if host.utf8.allSatisfy({ $0 < 0x80 }) {
                ascii = Array(host.utf8)
                scalars = []
            } else {
                ascii = nil
                scalars = Array(host.unicodeScalars)
            }
        }
    }

    /// Whether `host` matches, its case and a fully qualified name's trailing dot aside
    /// (`ProtectionSpace.foldedHost`).
    public func matches(_ host: String) -> Bool {
        matches(Subject(folded: ProtectionSpace.foldedHost(host)))
    }

    public func matches(_ host: Subject) -> Bool {
        if let ascii = host.ascii {
            return Self.glob(lowered, ascii, any: UInt8(ascii: "?"), run: UInt8(ascii: "*"))
        }
        // `?` is one character of the host, counted as Unicode scalars as every length of the
        // API is: over UTF-8 bytes, `b?cher` missed `bücher` and `b??cher` matched it.
        return Self.glob(lowered.map(Unicode.Scalar.init), host.scalars, any: "?", run: "*")
    }

    /// Iterative glob matching with one backtrack point: linear in practice, never exponential.
    /// `any` (`?`) matches one element of `text`, `run` (`*`) one or more.
    private static func glob<Element: Equatable>(_ pattern: [Element], _ text: [Element], any: Element, run: Element) -> Bool {
        var p = pattern.startIndex
        var t = text.startIndex
        var star: (p: Int, t: Int)?
        while t < text.endIndex {
            if p < pattern.endIndex, pattern[p] == any || pattern[p] == text[t] {
                p += 1
                t += 1
            } else if p < pattern.endIndex, pattern[p] == run {
                // A star must eat at least one character: `*.example.com` needs a label.
                star = (p, t + 1)
                p += 1
                t += 1
            } else if let backtrack = star {
                p = backtrack.p + 1
                t = backtrack.t + 1
                star = (backtrack.p, backtrack.t + 1)
            } else {
                return false
            }
        }
        // A star left over here would match nothing, and every star must eat a character:
        // `intranet*` does not match `intranet`. Backtracking cannot help, because the
        // segment before it already matched as far left as it could.
        return p == pattern.endIndex
    }
}

extension HostPattern: Codable {
    /// Set to `true` in a decoder's `userInfo` to read a policy this or an earlier release saved,
    /// which took globs refused since (one with a port, `example.com:443`): such a glob matches
    /// no host, as no host has a port, and keeps its text for an admin to see and fix. Refused,
    /// the stored policy did not load, and every challenge of its tenant failed.
    public static let savedEarlier = CodingUserInfoKey(rawValue: "countersign.hostPattern.savedEarlier")!

    /// A glob an earlier release took and this one refuses: it matches no host.
    private init(matchingNothing pattern: String) {
        self.pattern = pattern
        self.lowered = []
    }

    public init(from decoder: any Decoder) throws {
        let pattern = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(pattern)
        } catch let error as CountersignError {
            if decoder.userInfo[Self.savedEarlier] as? Bool == true {
                self.init(matchingNothing: pattern)
                return
            }
            // Named by its place in the body (`'rules[3].match.host'`): in a policy of many
            // rules, the glob alone does not say which rule to fix.
            throw CountersignError(error.code, "\(FieldPath(decoder.codingPath)): \(error.message)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(pattern)
    }
}
