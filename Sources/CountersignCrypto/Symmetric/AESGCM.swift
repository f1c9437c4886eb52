/// AES-256-GCM sealing in Countersign's envelope format.
///
/// A sealed value is `version (1 byte, 0x01) | nonce (12 random bytes) | ciphertext | tag (16 bytes)`.
/// The version byte is authenticated too: it is prepended to the associated data, so a
/// future format cannot be confused with this one.
///
/// Nonces are random, so one key must not seal more than 2^32 values (NIST SP 800-38D 8.3);
/// one data key per tenant stays many orders of magnitude below that.
///
/// The envelope this serves: a tenant's data key is sealed under the master key with the
/// tenant id as associated data (`seal(_:under:associatedData:)`), and each secret is sealed
/// under the data key with tenant id and row id as associated data, so a ciphertext copied to
/// another row or tenant does not open.
public enum AESGCM {
    /// The format written by `seal`.
    public static let formatVersion: UInt8 = 1
    /// Bytes of random nonce.
    public static let nonceByteCount = 12
    /// Bytes of authentication tag.
    public static let tagByteCount = 16
    /// Bytes a sealed value has beyond its plaintext.
    public static let overhead = 1 + nonceByteCount + tagByteCount
    /// The largest plaintext accepted: secrets are small, and OpenSSL counts in `Int32`.
    public static let maximumPlaintextByteCount = 16 << 20

    /// Encrypts and authenticates `plaintext`, binding it to `associatedData`.
    ///
    /// - Throws: `CryptoError` `invalid_argument` for plaintext above
    ///   `maximumPlaintextByteCount`; `crypto_internal_failure` if OpenSSL fails.
    public static func seal(_ plaintext: [UInt8], key: SymmetricKey, associatedData: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard plaintext.count <= maximumPlaintextByteCount, associatedData.count <= maximumPlaintextByteCount else {
            throw CryptoError(.invalidArgument, "plaintext or associated data is larger than \(maximumPlaintextByteCount) bytes")
        }
        let nonce = try SecureRandom.bytes(nonceByteCount)
        let context = try CipherContext()
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }

        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        guard context.start(encrypting: true, key: key, nonce: nonce),
            context.authenticate([formatVersion] + associatedData),
            context.transform(plaintext, into: &ciphertext),
            context.finish(),
            context.exchangeTag(&tag, reading: true)
        else {
            throw CryptoError(.internalFailure, "AES-GCM encryption failed")
        }
        var sealed: [UInt8] = []
        sealed.reserveCapacity(overhead + plaintext.count)
        sealed.append(formatVersion)
        sealed.append(contentsOf: nonce)
        sealed.append(contentsOf: ciphertext)
        sealed.append(contentsOf: tag)
        return sealed
    }

    /// Verifies and decrypts a value made by `seal` with the same key and associated data.
    ///
    /// Nothing of the plaintext is returned unless the tag verifies.
    ///
    /// - Throws: `CryptoError` `decryption_failed` for a wrong key, wrong associated data,
    ///   any altered byte, truncation, or an unknown format version.
    public static func open(_ sealed: [UInt8], key: SymmetricKey, associatedData: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard sealed.count >= overhead else {
            throw CryptoError(.decryptionFailed, "sealed value is too short")
        }
        guard sealed.count - overhead <= maximumPlaintextByteCount, associatedData.count <= maximumPlaintextByteCount else {
            throw CryptoError(.decryptionFailed, "sealed value or associated data is larger than any value seal produces")
        }
        guard sealed[0] == formatVersion else {
            throw CryptoError(.decryptionFailed, "sealed value has an unknown format version")
        }
        let nonce = Array(sealed[1..<(1 + nonceByteCount)])
        let ciphertext = Array(sealed[(1 + nonceByteCount)..<(sealed.count - tagByteCount)])
        var tag = Array(sealed.suffix(tagByteCount))
        let context = try CipherContext()
        OpenSSLErrorQueue.clear()
        // Decryption failures are expected input, not OpenSSL trouble; what OpenSSL queued
        // says nothing a caller may see.
        defer { OpenSSLErrorQueue.clear() }

        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        guard context.start(encrypting: false, key: key, nonce: nonce),
            context.authenticate([formatVersion] + associatedData),
            context.transform(ciphertext, into: &plaintext),
            context.exchangeTag(&tag, reading: false),
            context.finish()
        else {
            // GCM decrypts before it verifies, so the buffer holds unauthenticated plaintext.
            plaintext.wipe()
            throw CryptoError(.decryptionFailed, "sealed value does not open with this key and associated data")
        }
        return plaintext
    }

    /// Seals the bytes of `key` under `wrappingKey`: a tenant's data key under the master key.
    public static func seal(_ key: SymmetricKey, under wrappingKey: SymmetricKey, associatedData: [UInt8]) throws(CryptoError) -> [UInt8] {
        try key.withUnsafeBytes { (bytes) throws(CryptoError) in
            try seal(Array(bytes), key: wrappingKey, associatedData: associatedData)
        }
    }

    /// Opens a key sealed by `seal(_:under:associatedData:)`.
    ///
    /// - Throws: `CryptoError` `decryption_failed` as `open`, or when the content is not 32 bytes.
    public static func openKey(_ sealed: [UInt8], under wrappingKey: SymmetricKey, associatedData: [UInt8]) throws(CryptoError) -> SymmetricKey {
        let bytes = try open(sealed, key: wrappingKey, associatedData: associatedData)
        guard bytes.count == SymmetricKey.byteCount else {
            throw CryptoError(.decryptionFailed, "sealed value does not hold a 256-bit key")
        }
        return try SymmetricKey(bytes: bytes)
    }
}
