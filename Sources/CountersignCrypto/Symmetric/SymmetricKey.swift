/// A 256-bit key for AES-256-GCM: a tenant's data key or the master key that wraps them.
///
/// Its `description`, `debugDescription` and reflection (`dump`, debuggers' summaries) never
/// show the bytes. Equality is constant time.
public struct SymmetricKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The only size accepted: AES-256.
    public static let byteCount = 32

    // Swift arrays cannot be reliably wiped (copies are implicit); holding the bytes in one
    // private stored property at least keeps them out of every printed or reflected form.
    private let bytes: [UInt8]

    /// A key from exactly 32 bytes.
    ///
    /// - Throws: `CryptoError` `invalid_key_length` for any other length.
    public init(bytes: some Collection<UInt8>) throws(CryptoError) {
        guard bytes.count == Self.byteCount else {
            throw CryptoError(.invalidKeyLength, "an AES-256 key must be exactly \(Self.byteCount) bytes, got \(bytes.count)")
        }
        self.bytes = Array(bytes)
    }

    /// A fresh key from `SecureRandom`.
    ///
    /// - Throws: `CryptoError` `crypto_internal_failure` when OpenSSL has no randomness.
    public static func random() throws(CryptoError) -> SymmetricKey {
        try SymmetricKey(bytes: SecureRandom.bytes(byteCount))
    }

    /// Calls `body` with the key bytes, to hand them to storage or another API.
    ///
    /// Do not let the buffer escape; do not log it.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        // A typed-throws closure cannot pass through Array.withUnsafeBytes without losing its type.
        let result: Swift.Result<Result, Failure> = bytes.withUnsafeBytes { buffer in
            do throws(Failure) { return .success(try body(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool {
        ConstantTime.equals(lhs.bytes, rhs.bytes)
    }

    public var description: String { "SymmetricKey(256 bits, redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
