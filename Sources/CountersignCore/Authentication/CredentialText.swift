import Foundation

/// How a user name and password are encoded for a server.
enum CredentialText {
    /// `text` in Unicode Normalization Form C when the server asked for UTF-8 (`charset="UTF-8"`:
    /// RFC 7617 §2.1 for Basic, RFC 7616 §4 for Digest, which both mean "NFC, then UTF-8"), as
    /// stored otherwise: a server that names no charset compares whatever bytes it was given.
    /// A password typed on one system and stored decomposed (`e` and U+0301) is what the server
    /// that asked for UTF-8 expects as `é` (U+00E9).
    static func forServer(_ text: String, charsetUTF8: Bool) -> String {
        guard charsetUTF8, text.utf8.contains(where: { $0 >= 0x80 }) else { return text }
        return text.precomposedStringWithCanonicalMapping
    }
}
