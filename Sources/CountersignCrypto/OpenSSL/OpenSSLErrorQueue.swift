internal import COpenSSL

/// OpenSSL's per-thread error queue.
///
/// Every wrapper clears the queue before it calls OpenSSL and empties it before it returns,
/// because the queue is per thread and Swift concurrency runs unrelated tasks on the same
/// threads: a stale entry would otherwise be blamed on the next task's operation.
enum OpenSSLErrorQueue {
    /// An error code OpenSSL queued, split the way callers need to classify it.
    struct Entry {
        let code: UInt
        var library: Int32 { countersign_ERR_GET_LIB(code) }
        var reason: Int32 { countersign_ERR_GET_REASON(code) }
        var text: String {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// Forgets everything queued on this thread.
    static func clear() {
        ERR_clear_error()
    }

    /// Empties the queue and returns its entries, oldest first.
    static func drain() -> [Entry] {
        var entries: [Entry] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            // A pathological queue is bounded by OpenSSL (16 entries), but stay defensive.
            if entries.count < 32 { entries.append(Entry(code: code)) }
        }
        return entries
    }

    /// Empties the queue and renders it for `CryptoError.detail`.
    ///
    /// Call only where the input was not secret (certificates, chains). For keys, passphrases
    /// and ciphertexts use `drain()` or `clear()` and a fixed message instead: OpenSSL's texts
    /// name routines and reasons rather than data, but a security review should not have to
    /// prove that for every decoder OpenSSL may ever ship.
    static func drainDescription() -> String {
        drain().map(\.text).joined(separator: "; ")
    }
}
