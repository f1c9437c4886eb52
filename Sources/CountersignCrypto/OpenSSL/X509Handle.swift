internal import COpenSSL

/// Owns one reference to an OpenSSL `X509`.
///
/// Sendable because it is immutable after init: `pointer` is a `let`, and no code in this
/// module calls an OpenSSL function that mutates a certificate (`X509_set_*`, `X509_sign`,
/// `X509_add_ext`, ...) on a handle's pointer. What OpenSSL itself changes while reading a
/// certificate, the lazily computed extension cache, it guards with the certificate's own
/// lock (OpenSSL 3 `ossl_x509v3_cache_extensions`), and `X509_up_ref` / `X509_free` are
/// atomic, which is why servers share one `X509` between all their TLS connections.
final class X509Handle: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of a reference the caller already holds (from `d2i_X509`, `PEM_read_*`).
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Adds a reference to a certificate owned by someone else (a stack, a store context).
    init(retaining pointer: OpaquePointer) {
        X509_up_ref(pointer)
        self.pointer = pointer
    }

    deinit {
        X509_free(pointer)
    }
}
