import CountersignCore
import CountersignCrypto
import Foundation

/// The operator's bearer key, held only as its SHA-256 so that the configured text does not
/// linger in memory dumps, and compared in constant time.
public struct OperatorKey: Sendable, CustomStringConvertible, CustomReflectable {
    /// Operator keys are chosen by people; below this length they are too easy to guess.
    public static let minimumLength = 32

    let hash: [UInt8]

    public init(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count >= Self.minimumLength else {
            throw CountersignError(.invalidField, "the operator key must be at least \(Self.minimumLength) characters")
        }
        hash = Digest.hash(.sha256, trimmed)
    }

    func matches(_ presented: some StringProtocol) -> Bool {
        ConstantTime.equals(Digest.hash(.sha256, String(presented)), hash)
    }

    public var description: String { "OperatorKey(redacted)" }
    // The hash is unsalted and the key chosen by people: `dump` and debuggers, which walk the
    // mirror past the description, must not show it either, or it could be guessed offline.
    public var customMirror: Mirror { Mirror(self, children: ["hash": "redacted"], displayStyle: .struct) }
}
