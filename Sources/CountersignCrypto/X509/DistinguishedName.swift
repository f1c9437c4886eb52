internal import COpenSSL

/// Renderings of an OpenSSL `X509_NAME` and comparisons between encoded names.
enum DistinguishedName {
    /// RFC 2253 text, as `openssl x509 -nameopt RFC2253` prints it.
    static func rfc2253(ofName name: OpaquePointer) throws(CryptoError) -> String {
        let bio = try MemoryBIO()
        guard X509_NAME_print_ex(bio.pointer, name, 0, countersign_XN_FLAG_RFC2253()) >= 0 else {
            throw CryptoError(.malformedCertificate, "distinguished name cannot be printed", detail: OpenSSLErrorQueue.drainDescription())
        }
        return bio.string
    }

    /// The DER encoding of the name, as it appears in the certificate.
    static func der(ofName name: OpaquePointer) throws(CryptoError) -> [UInt8] {
        var bytes: UnsafePointer<UInt8>?
        var length = 0
        guard X509_NAME_get0_der(name, &bytes, &length) == 1, let bytes else {
            throw CryptoError(.malformedCertificate, "distinguished name cannot be encoded", detail: OpenSSLErrorQueue.drainDescription())
        }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }

    /// Whether two DER-encoded names are the same name, comparing them the way OpenSSL does
    /// (canonical encoding: string types unified, case and spaces folded), not byte for byte.
    ///
    /// A TLS server lists acceptable CAs with its own encoding of their names, which need not
    /// match the bytes inside a client certificate; a name that does not decode matches nothing.
    static func equal(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        if left == right { return true }
        guard let a = decode(left) else { return false }
        defer {
            X509_NAME_free(a)
            OpenSSLErrorQueue.clear()
        }
        guard let b = decode(right) else { return false }
        defer { X509_NAME_free(b) }
        return X509_NAME_cmp(a, b) == 0
    }

    /// Whether `der` is exactly one DER-encoded name.
    static func isWellFormed(_ der: [UInt8]) -> Bool {
        guard let name = decode(der) else { return false }
        X509_NAME_free(name)
        OpenSSLErrorQueue.clear()
        return true
    }

    private static func decode(_ der: [UInt8]) -> OpaquePointer? {
        guard !der.isEmpty, der.count <= Certificate.maximumByteCount else { return nil }
        return der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let name = d2i_X509_NAME(nil, &cursor, buffer.count) else {
                OpenSSLErrorQueue.clear()
                return nil
            }
            guard let cursor, let base = buffer.baseAddress, cursor - base == buffer.count else {
                X509_NAME_free(name)
                return nil
            }
            return name
        }
    }
}
