internal import COpenSSL

/// Comparisons whose running time does not depend on where inputs differ.
public enum ConstantTime {
    /// Whether `a` and `b` are equal, comparing contents in time that depends only on their
    /// length (CRYPTO_memcmp).
    ///
    /// Inputs of different lengths are unequal at once, without looking at their contents:
    /// lengths of MACs, hashes and tokens are public, their contents are not.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { left in
            b.withUnsafeBytes { right in
                CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0
            }
        }
    }
}
