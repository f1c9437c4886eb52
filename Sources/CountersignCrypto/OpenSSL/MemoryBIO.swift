internal import COpenSSL

/// An OpenSSL memory BIO, to read PEM from Swift bytes or to collect what OpenSSL prints.
///
/// Not Sendable: a BIO has a read/write position, so it lives inside one function call.
final class MemoryBIO {
    let pointer: OpaquePointer
    // A read-only BIO borrows its buffer, so the buffer lives exactly as long as the BIO.
    private let input: UnsafeMutableRawBufferPointer?

    /// An empty BIO to write into.
    init() throws(CryptoError) {
        guard let bio = BIO_new(BIO_s_mem()) else {
            OpenSSLErrorQueue.clear()
            throw CryptoError(.internalFailure, "OpenSSL could not allocate a memory buffer")
        }
        pointer = bio
        input = nil
    }

    /// A read-only BIO over a private copy of `bytes`.
    init(reading bytes: [UInt8]) throws(CryptoError) {
        // Copy into memory we own and can wipe: the bytes may be a private key in PEM.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        buffer.copyBytes(from: bytes)
        guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(bytes.count)) else {
            OPENSSL_cleanse(buffer.baseAddress, buffer.count)
            buffer.deallocate()
            OpenSSLErrorQueue.clear()
            throw CryptoError(.internalFailure, "OpenSSL could not allocate a memory buffer")
        }
        pointer = bio
        input = buffer
    }

    deinit {
        BIO_free(pointer)
        if let input {
            OPENSSL_cleanse(input.baseAddress, input.count)
            input.deallocate()
        }
    }

    /// Everything written so far.
    var contents: [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let length = countersign_BIO_get_mem_data(pointer, &data)
        guard let data, length > 0 else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
        }
    }

    /// Everything written so far, as text.
    var string: String {
        String(decoding: contents, as: UTF8.self)
    }
}
