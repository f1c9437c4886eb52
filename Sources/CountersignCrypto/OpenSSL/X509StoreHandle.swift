internal import COpenSSL

/// Owns an `X509_STORE`: the trust anchors of one evaluation.
///
/// Not Sendable: each evaluation builds its own store, so no store is shared or mutated
/// across threads.
final class X509StoreHandle {
    let pointer: OpaquePointer

    init() throws(CryptoError) {
        guard let store = X509_STORE_new() else {
            OpenSSLErrorQueue.clear()
            throw CryptoError(.internalFailure, "OpenSSL could not allocate a certificate store")
        }
        pointer = store
    }

    deinit {
        X509_STORE_free(pointer)
    }
}
