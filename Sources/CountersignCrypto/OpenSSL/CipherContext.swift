internal import COpenSSL

/// Owns an `EVP_CIPHER_CTX` for one AES-256-GCM encryption or decryption, with the steps
/// `AESGCM` takes in order: start, authenticate, transform, tag, finish. Each step returns
/// whether OpenSSL succeeded.
///
/// Not Sendable: a cipher context is stateful and belongs to one call.
final class CipherContext {
    let pointer: OpaquePointer
    private var encrypting = true

    init() throws(CryptoError) {
        guard let context = EVP_CIPHER_CTX_new() else {
            OpenSSLErrorQueue.clear()
            throw CryptoError(.internalFailure, "OpenSSL could not allocate a cipher context")
        }
        pointer = context
    }

    deinit {
        // Also wipes the expanded key schedule.
        EVP_CIPHER_CTX_free(pointer)
    }

    func start(encrypting: Bool, key: SymmetricKey, nonce: [UInt8]) -> Bool {
        self.encrypting = encrypting
        let cipherInit = encrypting ? EVP_EncryptInit_ex : EVP_DecryptInit_ex
        guard cipherInit(pointer, EVP_aes_256_gcm(), nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(pointer, EVP_CTRL_GCM_SET_IVLEN, Int32(nonce.count), nil) == 1
        else { return false }
        return key.withUnsafeBytes { keyBytes in
            nonce.withUnsafeBufferPointer { nonceBytes in
                cipherInit(pointer, nil, nil, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), nonceBytes.baseAddress) == 1
            }
        }
    }

    /// Feeds associated data, which the tag covers but the output does not contain.
    func authenticate(_ data: [UInt8]) -> Bool {
        guard !data.isEmpty else { return true }
        var ignored: Int32 = 0
        return data.withUnsafeBufferPointer { input in
            update(output: nil, written: &ignored, input: input.baseAddress, count: Int32(input.count))
        }
    }

    /// Encrypts or decrypts `input` into `output`, which has the same length (GCM is a stream mode).
    func transform(_ input: [UInt8], into output: inout [UInt8]) -> Bool {
        precondition(output.count == input.count)
        // An empty Swift array may have no storage; there is nothing to feed anyway.
        guard !input.isEmpty else { return true }
        var written: Int32 = 0
        let ok = input.withUnsafeBufferPointer { inputBytes in
            output.withUnsafeMutableBufferPointer { outputBytes in
                update(output: outputBytes.baseAddress, written: &written, input: inputBytes.baseAddress, count: Int32(inputBytes.count))
            }
        }
        return ok && Int(written) == input.count
    }

    /// Reads the tag after encrypting (`reading`), or sets the expected tag before finishing a decryption.
    func exchangeTag(_ tag: inout [UInt8], reading: Bool) -> Bool {
        tag.withUnsafeMutableBytes { bytes in
            EVP_CIPHER_CTX_ctrl(pointer, reading ? EVP_CTRL_GCM_GET_TAG : EVP_CTRL_GCM_SET_TAG, Int32(bytes.count), bytes.baseAddress) == 1
        }
    }

    /// Completes the operation; for a decryption, this is where the tag is verified.
    func finish() -> Bool {
        // GCM produces no output here, but OpenSSL wants a buffer to write nothing into.
        var scratch = [UInt8](repeating: 0, count: 16)
        var written: Int32 = 0
        return scratch.withUnsafeMutableBufferPointer { buffer in
            (encrypting
                ? EVP_EncryptFinal_ex(pointer, buffer.baseAddress, &written)
                : EVP_DecryptFinal_ex(pointer, buffer.baseAddress, &written)) == 1
        } && written == 0
    }

    private func update(output: UnsafeMutablePointer<UInt8>?, written: inout Int32, input: UnsafePointer<UInt8>?, count: Int32) -> Bool {
        (encrypting
            ? EVP_EncryptUpdate(pointer, output, &written, input, count)
            : EVP_DecryptUpdate(pointer, output, &written, input, count)) == 1
    }
}
