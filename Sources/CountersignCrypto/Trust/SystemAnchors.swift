internal import COpenSSL
import Foundation

/// The operating system's trust anchors, read once per process.
///
/// Reading the CA bundle costs about 25 ms (some 140 PEM certificates), far too much for
/// every evaluation, so the parsed certificates are kept and handed to each evaluation as
/// its trusted stack. A changed bundle is seen after a restart, as with most TLS clients.
enum SystemAnchors {
    /// OpenSSL's default CA file (`$SSL_CERT_FILE`, else the file under OPENSSLDIR, on Debian
    /// `/etc/ssl/certs/ca-certificates.crt`); when that yields nothing, every certificate in
    /// the default CA directory (`$SSL_CERT_DIR`, else `OPENSSLDIR/certs`).
    ///
    /// Empty when neither exists, which makes evaluations with system anchors fail closed.
    static let certificates: [X509Handle] = load()

    private static let maximumFileSize = 16 * 1024 * 1024

    private static func load() -> [X509Handle] {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let store = try? X509StoreHandle() else { return [] }
        // The same file an X509_STORE_set_default_paths store reads eagerly; its hashed
        // directory lookup is lazy and cannot be listed, hence the fallback below.
        _ = X509_STORE_set_default_paths(store.pointer)
        let all = X509_STORE_get1_all_certs(store.pointer)
        let fromFile = X509Stack.handles(borrowing: all)
        if let all { countersign_sk_X509_pop_free(all) }
        return fromFile.isEmpty ? loadDirectories() : fromFile
    }

    private static func loadDirectories() -> [X509Handle] {
        let variable = String(cString: X509_get_default_cert_dir_env())
        let paths = ProcessInfo.processInfo.environment[variable] ?? String(cString: X509_get_default_cert_dir())
        var seen: Set<String> = []
        var handles: [X509Handle] = []
        for directory in paths.split(separator: ":").map(String.init) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names.sorted() {
                let path = (directory as NSString).appendingPathComponent(name)
                guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                    (attributes[.size] as? NSNumber)?.intValue ?? Int.max <= maximumFileSize,
                    let data = FileManager.default.contents(atPath: path)
                else { continue }
                // Not Certificate.parseChain: a bundle here holds far more than one chain's worth.
                try? PEMReader.forEachBlock(in: [UInt8](data), limit: maximumFileSize) { (label, der) throws(CryptoError) in
                    guard label == "CERTIFICATE",
                        let certificate = try? Certificate(derBytes: der),
                        seen.insert(certificate.sha256Fingerprint).inserted
                    else { return }
                    handles.append(certificate.handle)
                }
            }
        }
        return handles
    }
}
