import CountersignCore

/// One schema migration: a SQL file named `NNNN_name.sql`.
///
/// The file runs in one transaction through the simple query protocol, so it may hold
/// several statements but must not contain transaction control (`BEGIN`, `COMMIT`) or
/// statements that cannot run in a transaction (`CREATE INDEX CONCURRENTLY`, `VACUUM`).
public struct Migration: Sendable, Hashable {
    /// The number at the start of the file name: `0001_init.sql` is version 1.
    public let version: Int
    /// The rest of the file name: `0001_init.sql` is `"init"`.
    public let name: String
    /// The file's text.
    public let sql: String
    /// SHA-256 of the file's text (UTF-8), 64 lowercase hex digits. Recorded when the
    /// migration is applied, and compared on every later run.
    public let checksum: String

    /// A migration from its parts. `version` must be positive and fit in an `int4`.
    public init(version: Int, name: String, sql: String) {
        precondition(version > 0 && version <= Int(Int32.max), "a migration version must be in 1...\(Int32.max)")
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = SHA256.hexDigest(sql.utf8)
    }

    /// A migration from a file name (`0001_init.sql`) and its text.
    ///
    /// Throws ``CountersignCore/CountersignError/Code/migrationUnreadable`` if the name is not
    /// `NNNN_name.sql` (digits, an underscore, then letters, digits, `_` or `-`).
    public init(fileName: String, sql: String) throws {
        guard let (version, name) = Self.parse(fileName: fileName) else {
            throw CountersignError(
                .migrationUnreadable,
                "migration file \"\(fileName)\" is not named NNNN_name.sql (name: letters, digits, _ or -)"
            )
        }
        self.init(version: version, name: name, sql: sql)
    }

    /// The canonical file name, `0001_init.sql`.
    public var fileName: String {
        let digits = String(version)
        let padded = digits.count >= 4 ? digits : String(repeating: "0", count: 4 - digits.count) + digits
        return "\(padded)_\(name).sql"
    }

    static func parse(fileName: String) -> (version: Int, name: String)? {
        guard fileName.hasSuffix(".sql") else { return nil }
        let stem = fileName.dropLast(4)
        guard let underscore = stem.firstIndex(of: "_") else { return nil }
        let digits = stem[..<underscore]
        let name = stem[stem.index(after: underscore)...]
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit),
            let version = Int(digits), version > 0, version <= Int(Int32.max),
            !name.isEmpty,
            name.allSatisfy({ $0.isASCIIDigit || $0.isASCIILetter || $0 == "_" || $0 == "-" })
        else { return nil }
        return (version, String(name))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
    fileprivate var isASCIILetter: Bool { isASCII && isLetter }
}
