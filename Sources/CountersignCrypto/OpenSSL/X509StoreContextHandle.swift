internal import COpenSSL

/// Owns an `X509_STORE_CTX`: the state of one `X509_verify_cert` call.
///
/// Not Sendable: it belongs to one evaluation.
final class X509StoreContextHandle {
    let pointer: OpaquePointer

    init() throws(CryptoError) {
        guard let context = X509_STORE_CTX_new() else {
            OpenSSLErrorQueue.clear()
            throw CryptoError(.internalFailure, "OpenSSL could not allocate a verification context")
        }
        pointer = context
    }

    deinit {
        X509_STORE_CTX_free(pointer)
    }
}
