internal import COpenSSL

/// Reads and writes PEM (RFC 7468) blocks with OpenSSL's parser.
enum PEMReader {
    /// Calls `body` with the label and decoded bytes of each block in `text`, in order.
    ///
    /// Text outside blocks is ignored. A block that is damaged (bad base64, no end line) or
    /// that carries RFC 1421 headers (legacy encryption, which certificates never use) is an
    /// error, so that a truncated chain is not silently read as a shorter one.
    static func forEachBlock(
        in text: [UInt8],
        limit: Int,
        _ body: (String, [UInt8]) throws(CryptoError) -> Void
    ) throws(CryptoError) {
        guard text.count <= limit else {
            throw CryptoError(.certificateTooLarge, "PEM text is larger than \(limit) bytes")
        }
        let bio = try MemoryBIO(reading: text)
        OpenSSLErrorQueue.clear()
        while true {
            var name: UnsafeMutablePointer<CChar>?
            var header: UnsafeMutablePointer<CChar>?
            var data: UnsafeMutablePointer<UInt8>?
            var length = 0
            let ok = PEM_read_bio(bio.pointer, &name, &header, &data, &length)
            defer {
                countersign_OPENSSL_free(name)
                countersign_OPENSSL_free(header)
                // A block may be a private key pasted where certificates belong.
                countersign_OPENSSL_clear_free(data, max(length, 0))
            }
            guard ok == 1 else {
                // OpenSSL reports the end of input as "no start line"; anything else is damage.
                let last = ERR_peek_last_error()
                if countersign_ERR_GET_LIB(last) == ERR_LIB_PEM, countersign_ERR_GET_REASON(last) == PEM_R_NO_START_LINE {
                    OpenSSLErrorQueue.clear()
                    return
                }
                throw CryptoError(.malformedCertificate, "PEM text is damaged", detail: OpenSSLErrorQueue.drainDescription())
            }
            let label = name.map { String(cString: $0) } ?? ""
            if let header, header.pointee != 0 {
                throw CryptoError(.malformedCertificate, "PEM block \(label) carries headers, which are not supported")
            }
            let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
            try body(label, bytes)
        }
    }

    /// A PEM block: `-----BEGIN label-----`, base64 in 64-character lines, `-----END label-----`.
    static func encode(label: String, der: [UInt8]) -> String {
        let base64 = Array(Base64.encode(der).utf8)
        var text = "-----BEGIN \(label)-----\n"
        var index = 0
        while index < base64.count {
            let end = min(index + 64, base64.count)
            text += String(decoding: base64[index..<end], as: UTF8.self) + "\n"
            index = end
        }
        text += "-----END \(label)-----\n"
        return text
    }
}
