internal import COpenSSL

/// An OpenSSL `STACK_OF(X509)` that holds its own reference to every certificate in it.
///
/// Not Sendable: it exists for the duration of one OpenSSL call that wants a stack.
final class X509Stack {
    let pointer: OpaquePointer

    /// A stack holding `certificates`, first element first.
    init(_ certificates: [X509Handle]) throws(CryptoError) {
        guard let stack = countersign_sk_X509_new_null() else {
            OpenSSLErrorQueue.clear()
            throw CryptoError(.internalFailure, "OpenSSL could not allocate a certificate stack")
        }
        pointer = stack
        for certificate in certificates {
            // The stack's reference is dropped by pop_free in deinit.
            X509_up_ref(certificate.pointer)
            if countersign_sk_X509_push(stack, certificate.pointer) <= 0 {
                X509_free(certificate.pointer)
                OpenSSLErrorQueue.clear()
                throw CryptoError(.internalFailure, "OpenSSL could not grow a certificate stack")
            }
        }
    }

    deinit {
        countersign_sk_X509_pop_free(pointer)
    }

    /// Handles of their own for the certificates of a stack someone else owns.
    static func handles(borrowing stack: OpaquePointer?) -> [X509Handle] {
        guard let stack else { return [] }
        let count = countersign_sk_X509_num(stack)
        guard count > 0 else { return [] }
        return (0..<count).compactMap { index in
            countersign_sk_X509_value(stack, index).map { X509Handle(retaining: $0) }
        }
    }
}
