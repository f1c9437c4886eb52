#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The master key: the one key outside the database, which wraps every tenant's data key.
///
/// A key file holds either exactly 32 raw bytes (not all of them printable text), or text: 64 hex
/// digits, or base64 / base64url (padded or not) of 32 bytes, with any surrounding whitespace.
/// `generate(toFile:)` writes base64.
public enum MasterKey {
    // Far above any valid key file (64 hex digits and a newline), so a wrong path (a log, a
    // disk image) is refused before it is read into memory.
    private static let maximumFileSize = 4096

    /// Reads the key in the file at `path`.
    ///
    /// The file's mode is not checked (orchestrators mount secrets with their own modes); keep
    /// it readable by the service's user only.
    ///
    /// - Throws: `CryptoError` `master_key_missing` when the file does not exist or cannot be
    ///   read; `master_key_invalid` when it is not a regular file or does not hold a 256-bit key
    ///   in one of the accepted forms.
    public static func load(fromFile path: String) throws(CryptoError) -> SymmetricKey {
        var contents = try readKeyFile(path)
        defer { contents.wipe() }
        guard let key = decode(contents) else {
            throw CryptoError(
                .masterKeyInvalid,
                "master key file \(path) must hold 32 random raw bytes, or 64 hex digits, or base64 of 32 bytes "
                    + "(e.g. from `openssl rand -base64 32`)"
            )
        }
        return key
    }

    /// Creates a new random key, writes it to a new file at `path` as base64 text with mode
    /// 0600, and returns it.
    ///
    /// An existing file is never replaced: losing the master key loses every secret it wraps.
    ///
    /// - Throws: `CryptoError` `master_key_exists` when `path` exists;
    ///   `master_key_missing` when the file cannot be created or written.
    @discardableResult
    public static func generate(toFile path: String) throws(CryptoError) -> SymmetricKey {
        let key = try SymmetricKey.random()
        var text = Array((key.withUnsafeBytes { Base64.encode(Array($0)) } + "\n").utf8)
        defer { text.wipe() }

        // O_EXCL makes creation atomic (no overwrite, no symlink followed); the mode is set at
        // creation, so the key is never readable by others, not even for an instant.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            if code == EEXIST {
                throw CryptoError(.masterKeyExists, "master key file \(path) already exists; it is never overwritten")
            }
            throw CryptoError(.masterKeyMissing, "master key file \(path) cannot be created: \(describe(errno: code))")
        }
        var failure: Int32 = 0
        // The umask can only have removed bits; set the mode explicitly anyway.
        if fchmod(descriptor, 0o600) != 0 { failure = errno }
        if failure == 0 {
            failure = text.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if count < 0 {
                        if errno == EINTR { continue }
                        return errno
                    }
                    offset += count
                }
                return 0
            }
        }
        if failure == 0, fsync(descriptor) != 0 { failure = errno }
        if close(descriptor) != 0, failure == 0 { failure = errno }
        guard failure == 0 else {
            // A half-written key file would be loaded as invalid later; remove it now.
            unlink(path)
            throw CryptoError(.masterKeyMissing, "master key file \(path) cannot be written: \(describe(errno: failure))")
        }
        return key
    }

    /// The key in `contents`, or `nil`.
    static func decode(_ contents: [UInt8]) -> SymmetricKey? {
        // Thirty-two characters of text (a 128-bit key in hex, a passphrase, base64 of 24 bytes
        // saved without a newline) are no raw key, and random bytes are text only about once in
        // 10^14 keys: raw means at least one byte that is not printable ASCII.
        let isText = contents.allSatisfy { (0x20...0x7E).contains($0) || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        if contents.count == SymmetricKey.byteCount, !isText {
            return try? SymmetricKey(bytes: contents)
        }
        let whitespace: Set<UInt8> = [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")]
        var text = contents[...]
        while let first = text.first, whitespace.contains(first) { text.removeFirst() }
        while let last = text.last, whitespace.contains(last) { text.removeLast() }
        // Decoded from the bytes read, which the caller wipes, never through a String copy.
        // 64 hex digits cannot also be base64 of 32 bytes (that is 43 or 44 characters).
        if text.count == SymmetricKey.byteCount * 2, var bytes = Hex.decode(text) {
            defer { bytes.wipe() }
            return try? SymmetricKey(bytes: bytes)
        }
        if var bytes = Base64.decode(text) {
            defer { bytes.wipe() }
            return try? SymmetricKey(bytes: bytes)
        }
        return nil
    }

    private static func readKeyFile(_ path: String) throws(CryptoError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            let reason = code == ENOENT ? "does not exist" : "cannot be read: \(describe(errno: code))"
            throw CryptoError(.masterKeyMissing, "master key file \(path) \(reason)")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw CryptoError(.masterKeyMissing, "master key file \(path) cannot be read: \(describe(errno: errno))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw CryptoError(.masterKeyInvalid, "master key file \(path) is not a regular file")
        }
        guard status.st_size <= maximumFileSize else {
            throw CryptoError(.masterKeyInvalid, "master key file \(path) is larger than \(maximumFileSize) bytes")
        }
        var contents = [UInt8](repeating: 0, count: maximumFileSize + 1)
        var total = 0
        while total < contents.count {
            let count = contents.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + total, $0.count - total) }
            if count < 0 {
                if errno == EINTR { continue }
                let code = errno
                contents.wipe()
                throw CryptoError(.masterKeyMissing, "master key file \(path) cannot be read: \(describe(errno: code))")
            }
            if count == 0 { break }
            total += count
        }
        // The file may have grown between fstat and read.
        guard total <= maximumFileSize else {
            contents.wipe()
            throw CryptoError(.masterKeyInvalid, "master key file \(path) is larger than \(maximumFileSize) bytes")
        }
        let result = Array(contents.prefix(total))
        contents.wipe()
        return result
    }

    private static func describe(errno code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }
}
