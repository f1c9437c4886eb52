internal import COpenSSL

/// Owns an OpenSSL `PKCS12` structure while it is parsed or built.
///
/// Not Sendable: it lives inside one call.
final class PKCS12Handle {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        PKCS12_free(pointer)
    }
}
