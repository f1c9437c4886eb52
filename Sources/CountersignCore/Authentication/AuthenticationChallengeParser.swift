/// Parses `WWW-Authenticate` and `Proxy-Authenticate` field values into challenges
/// (RFC 9110 §11.2 and §11.6.1, formerly RFC 7235).
///
/// The input is the list of field values as received: a response that repeats the field
/// (as IIS does with `Negotiate` and `NTLM`) gives one value per line, and each value may itself
/// hold several comma-separated challenges. The output keeps the server's order.
///
/// How the comma ambiguity is resolved: the field is a comma-separated list whose elements are
/// either the start of a challenge (`scheme`, `scheme token68`, `scheme name=value`) or one more
/// auth-param of the challenge before it (`name=value`). An element that begins with a token
/// followed by optional whitespace and `=` is an auth-param (also right after a bare scheme, as in
/// `Basic, realm="x"`, which is read leniently as `Basic realm="x"`); any other element that
/// begins with a token starts a new challenge. After `scheme` and whitespace, the rest of the element is a
/// token68 when it is entirely token68 characters and padding; otherwise it is an auth-param.
/// Empty list elements (`, ,`) are skipped, as RFC 9110 §5.6.1 asks of recipients.
///
/// The parser works on UTF-8 bytes, visits each byte a bounded number of times, and stops at the
/// first error with a stable code and the position: `malformed_challenge` (grammar, control
/// characters, unterminated quotes, invalid UTF-8), `challenge_too_large`, `too_many_challenges`,
/// `too_many_parameters`. One error fails the whole parse, because after a syntax error the
/// boundaries of the following challenges are guesswork. A duplicate auth-param is not a syntax
/// error: see ``AuthenticationChallenge/duplicateParameterName``.
public struct AuthenticationChallengeParser: Sendable {
    /// Bounds that keep hostile input cheap to refuse.
    public struct Limits: Sendable, Hashable {
        /// Largest single field value, in UTF-8 bytes. Default 16 KiB: a Negotiate token68 is a
        /// few KiB at most, and common servers cap a whole header line at 8 KiB.
        public var maximumFieldValueBytes: Int
        /// Largest sum of all field values, in UTF-8 bytes. Default 64 KiB.
        public var maximumTotalBytes: Int
        /// Most field values. Default 64.
        public var maximumFieldValues: Int
        /// Most challenges across all field values. Default 32.
        public var maximumChallenges: Int
        /// Most auth-params in one challenge. Default 64.
        public var maximumParametersPerChallenge: Int

        public init(
            maximumFieldValueBytes: Int = 16 * 1024,
            maximumTotalBytes: Int = 64 * 1024,
            maximumFieldValues: Int = 64,
            maximumChallenges: Int = 32,
            maximumParametersPerChallenge: Int = 64
        ) {
            self.maximumFieldValueBytes = maximumFieldValueBytes
            self.maximumTotalBytes = maximumTotalBytes
            self.maximumFieldValues = maximumFieldValues
            self.maximumChallenges = maximumChallenges
            self.maximumParametersPerChallenge = maximumParametersPerChallenge
        }
    }

    /// The limits this parser enforces.
    public var limits: Limits

    /// A parser with the given limits.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The challenges of the given field values, in order.
    ///
    /// - Parameter fieldValues: the values of every `WWW-Authenticate` (or every
    ///   `Proxy-Authenticate`) field of one response, one element per field line.
    /// - Throws: `malformed_challenge`, `challenge_too_large`, `too_many_challenges` or
    ///   `too_many_parameters`; the message says which value and byte offset.
    public func parse(_ fieldValues: [String]) throws(CountersignError) -> [AuthenticationChallenge] {
        try checkSizes(fieldValues.map { $0.utf8.count })
        var challenges: [AuthenticationChallenge] = []
        for (index, value) in fieldValues.enumerated() {
            var scanner = ChallengeFieldScanner(bytes: Array(value.utf8), fieldNumber: index + 1, limits: limits)
            try scanner.scan(into: &challenges)
        }
        return challenges
    }

    /// The challenges of one field value.
    public func parse(_ fieldValue: String) throws(CountersignError) -> [AuthenticationChallenge] {
        try parse([fieldValue])
    }

    /// The challenges of field values given as raw bytes, which must be UTF-8 where they are not
    /// ASCII (only quoted-strings may hold non-ASCII bytes).
    public func parse(utf8FieldValues fieldValues: [[UInt8]]) throws(CountersignError) -> [AuthenticationChallenge] {
        try checkSizes(fieldValues.map(\.count))
        var challenges: [AuthenticationChallenge] = []
        for (index, value) in fieldValues.enumerated() {
            var scanner = ChallengeFieldScanner(bytes: value, fieldNumber: index + 1, limits: limits)
            try scanner.scan(into: &challenges)
        }
        return challenges
    }

    /// Refuses oversized input before looking at a single byte of it.
    private func checkSizes(_ sizes: [Int]) throws(CountersignError) {
        guard sizes.count <= limits.maximumFieldValues else {
            throw CountersignError(
                .tooManyChallenges,
                "more than \(limits.maximumFieldValues) authentication field values"
            )
        }
        var total = 0
        for (index, size) in sizes.enumerated() {
            guard size <= limits.maximumFieldValueBytes else {
                throw CountersignError(
                    .challengeTooLarge,
                    "authentication field value #\(index + 1) is \(size) bytes; the limit is \(limits.maximumFieldValueBytes)"
                )
            }
            total += size
        }
        guard total <= limits.maximumTotalBytes else {
            throw CountersignError(
                .challengeTooLarge,
                "authentication field values total \(total) bytes; the limit is \(limits.maximumTotalBytes)"
            )
        }
    }
}
