internal import COpenSSL

/// A private key (RSA or EC) for a client identity, held by OpenSSL.
///
/// Its `description`, `debugDescription` and reflection never show key material.
public struct PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The kinds of key accepted.
    public enum Algorithm: Sendable, Hashable, CustomStringConvertible {
        /// RSA with a modulus of `bits` bits (at least 2048).
        case rsa(bits: Int)
        /// ECDSA on a NIST curve, by its OpenSSL name (`prime256v1` is P-256).
        case ec(curve: String)

        public var description: String {
            switch self {
            case .rsa(let bits): "RSA-\(bits)"
            case .ec(let curve): "EC-\(curve)"
            }
        }
    }

    /// The largest PEM text accepted (an RSA-16384 key is about 12 KiB).
    public static let maximumPEMByteCount = 64 * 1024

    let handle: PrivateKeyHandle
    /// The key's algorithm and size.
    public let algorithm: Algorithm

    /// Reads a private key from PEM: PKCS#8 (`PRIVATE KEY`), encrypted PKCS#8
    /// (`ENCRYPTED PRIVATE KEY`), or the traditional `RSA PRIVATE KEY` / `EC PRIVATE KEY`
    /// forms, including their legacy `Proc-Type: 4,ENCRYPTED` encryption. Other blocks
    /// (certificates) before the key are skipped.
    ///
    /// - Parameter passphrase: for an encrypted key; ignored for a plain one.
    /// - Throws: `CryptoError` `private_key_passphrase_required` (encrypted, no passphrase),
    ///   `private_key_bad_passphrase`, `malformed_private_key`, `unsupported_private_key`.
    ///   Messages never contain the key or the passphrase; OpenSSL's error queue is discarded.
    public init(pem: String, passphrase: String? = nil) throws(CryptoError) {
        let text = Array(pem.utf8)
        guard text.count <= Self.maximumPEMByteCount else {
            throw CryptoError(.malformedPrivateKey, "private key PEM is larger than \(Self.maximumPEMByteCount) bytes")
        }
        // An encrypted key's derivation costs what the uploader chose, paid even for a wrong
        // passphrase: looked at before anything is decrypted.
        let blocks = try MemoryBIO(reading: text)
        guard withExtendedLifetime(blocks, { countersign_pem_keys_kdf_within(blocks.pointer, ClientIdentity.maximumIterations) }) == 1 else {
            throw CryptoError(.malformedPrivateKey, "the encrypted private key asks for more than \(ClientIdentity.maximumIterations) key-derivation iterations")
        }
        let bio = try MemoryBIO(reading: text)
        let request = PassphraseRequest(passphrase)
        OpenSSLErrorQueue.clear()
        // The callback is always set: with none, OpenSSL would prompt on the terminal.
        let key = withExtendedLifetime((bio, request)) {
            PEM_read_bio_PrivateKey(bio.pointer, nil, supplyPassphrase, Unmanaged.passUnretained(request).toOpaque())
        }
        OpenSSLErrorQueue.clear()
        guard let key else {
            if request.wasAsked {
                if passphrase == nil {
                    throw CryptoError(.privateKeyPassphraseRequired, "private key is encrypted and no passphrase was given")
                }
                throw CryptoError(.privateKeyBadPassphrase, "passphrase does not decrypt the private key")
            }
            throw CryptoError(.malformedPrivateKey, "PEM text holds no readable private key")
        }
        try self.init(handle: PrivateKeyHandle(taking: key))
    }

    /// Reads an unencrypted PKCS#8 `PrivateKeyInfo` in DER, as `pkcs8DER` produces.
    ///
    /// - Throws: `CryptoError` `malformed_private_key`, `unsupported_private_key`.
    public init(pkcs8DER: [UInt8]) throws(CryptoError) {
        guard !pkcs8DER.isEmpty, pkcs8DER.count <= Self.maximumPEMByteCount else {
            throw CryptoError(.malformedPrivateKey, "PKCS#8 key is empty or larger than \(Self.maximumPEMByteCount) bytes")
        }
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        var consumed = 0
        let info: OpaquePointer? = pkcs8DER.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, buffer.count)
            if let cursor, let base = buffer.baseAddress { consumed = cursor - base }
            return info
        }
        guard let info else {
            throw CryptoError(.malformedPrivateKey, "bytes are not a DER PKCS#8 private key")
        }
        // PKCS8_PRIV_KEY_INFO_free wipes the key octets it holds.
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        guard consumed == pkcs8DER.count else {
            throw CryptoError(.malformedPrivateKey, "bytes follow the PKCS#8 private key")
        }
        guard let key = EVP_PKCS82PKEY(info) else {
            throw CryptoError(.malformedPrivateKey, "PKCS#8 structure holds no usable private key")
        }
        try self.init(handle: PrivateKeyHandle(taking: key))
    }

    init(handle: PrivateKeyHandle) throws(CryptoError) {
        self.handle = handle
        self.algorithm = try Self.algorithm(of: handle.pointer)
    }

    /// The key as unencrypted PKCS#8 `PrivateKeyInfo` DER, for storage. Secret: seal it with
    /// `AESGCM` before it leaves memory.
    public var pkcs8DER: [UInt8] {
        get throws(CryptoError) {
            OpenSSLErrorQueue.clear()
            defer { OpenSSLErrorQueue.clear() }
            guard let info = EVP_PKEY2PKCS8(handle.pointer) else {
                throw CryptoError(.internalFailure, "OpenSSL could not encode the private key")
            }
            defer { PKCS8_PRIV_KEY_INFO_free(info) }
            var buffer: UnsafeMutablePointer<UInt8>?
            let length = i2d_PKCS8_PRIV_KEY_INFO(info, &buffer)
            guard length > 0, let buffer else {
                throw CryptoError(.internalFailure, "OpenSSL could not encode the private key")
            }
            defer { countersign_OPENSSL_clear_free(buffer, Int(length)) }
            return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
        }
    }

    /// Whether this key is the private half of `certificate`'s public key.
    public func matches(_ certificate: Certificate) -> Bool {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        return X509_check_private_key(certificate.handle.pointer, handle.pointer) == 1
    }

    public var description: String { "PrivateKey(\(algorithm), redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["algorithm": algorithm], displayStyle: .struct) }

    private static func algorithm(of key: OpaquePointer) throws(CryptoError) -> Algorithm {
        defer { OpenSSLErrorQueue.clear() }
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA:
            let bits = Int(EVP_PKEY_get_bits(key))
            guard bits >= 2048 else {
                throw CryptoError(.unsupportedPrivateKey, "RSA keys must have at least 2048 bits, this one has \(bits)")
            }
            return .rsa(bits: bits)
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else {
                throw CryptoError(.unsupportedPrivateKey, "EC keys must use a named curve")
            }
            let curve = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard ["prime256v1", "secp384r1", "secp521r1"].contains(curve) else {
                throw CryptoError(.unsupportedPrivateKey, "EC keys must use P-256, P-384 or P-521, not \(curve)")
            }
            return .ec(curve: curve)
        default:
            throw CryptoError(.unsupportedPrivateKey, "only RSA and EC private keys are supported")
        }
    }
}
