/// What the passphrase callback may answer, and whether OpenSSL asked (which tells an
/// encrypted key with a wrong passphrase from a damaged one).
final class PassphraseRequest {
    let passphrase: [UInt8]?
    var wasAsked = false

    init(_ passphrase: String?) {
        self.passphrase = passphrase.map { Array($0.utf8) }
    }
}

/// OpenSSL's `pem_password_cb`: copies the passphrase into OpenSSL's buffer, or refuses.
func supplyPassphrase(
    _ buffer: UnsafeMutablePointer<CChar>?,
    _ size: Int32,
    _ writing: Int32,
    _ context: UnsafeMutableRawPointer?
) -> Int32 {
    guard let buffer, let context else { return -1 }
    let request = Unmanaged<PassphraseRequest>.fromOpaque(context).takeUnretainedValue()
    request.wasAsked = true
    guard let passphrase = request.passphrase, passphrase.count <= Int(size) else { return -1 }
    passphrase.withUnsafeBytes { bytes in
        if let source = bytes.baseAddress, !bytes.isEmpty {
            UnsafeMutableRawPointer(buffer).copyMemory(from: source, byteCount: bytes.count)
        }
    }
    return Int32(passphrase.count)
}
