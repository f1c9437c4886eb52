internal import COpenSSL

extension Array where Element: FixedWidthInteger {
    /// Overwrites the bytes with zeros in a way the optimiser keeps (OPENSSL_cleanse).
    ///
    /// Best effort: Swift may have copied the array before (copy-on-write), and those copies
    /// are out of reach; wiping still shortens how long secrets stay in memory.
    public mutating func wipe() {
        withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
            OPENSSL_cleanse(base, bytes.count)
        }
    }
}
