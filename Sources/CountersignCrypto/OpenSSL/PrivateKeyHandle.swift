internal import COpenSSL

/// Owns one reference to an OpenSSL `EVP_PKEY` holding a private key.
///
/// Sendable because it is immutable after init: `pointer` is a `let`, and no code in this
/// module calls a mutating OpenSSL function (`EVP_PKEY_set*`, `EVP_PKEY_assign*`, parameter
/// setters) on it. What OpenSSL changes while using a key, its provider-side export cache,
/// it guards with the key's own lock (OpenSSL 3 `evp_keymgmt_util_cache_keydata`), which is
/// why one `EVP_PKEY` is shared by every connection of a TLS server.
final class PrivateKeyHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of a reference the caller already holds.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        // EVP_PKEY_free cleanses the key material of the built-in providers.
        EVP_PKEY_free(pointer)
    }
}
