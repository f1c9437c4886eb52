/// Basic credentials (RFC 7617).
public enum BasicAuthorization {
    /// The `Authorization` (or `Proxy-Authorization`) field value for `user` and `password`:
    /// `Basic ` and the base64 of `user:password` in UTF-8.
    ///
    /// UTF-8 is what RFC 7617 §2.1 defines (`charset="UTF-8"`) and what every current client
    /// sends. With `charsetUTF8` (the challenge said `charset="UTF-8"`) both are normalized to
    /// NFC first, as that parameter asks; without it they are encoded exactly as stored, because
    /// the server compares them with whatever bytes it was provisioned with.
    ///
    /// - Throws: `invalid_basic_user` when `user` contains a colon (the server would split the
    ///   pair at it, RFC 7617 §2) or a control character; `invalid_basic_password` when
    ///   `password` contains a control character (RFC 7617 §2 forbids them in both).
    public static func headerValue(user: String, password: String, charsetUTF8: Bool = false) throws(CountersignError) -> String {
        let user = CredentialText.forServer(user, charsetUTF8: charsetUTF8)
        let password = CredentialText.forServer(password, charsetUTF8: charsetUTF8)
        guard !user.utf8.contains(UInt8(ascii: ":")) else {
            throw CountersignError(.invalidBasicUser, "a Basic user-id cannot contain ':'")
        }
        guard !user.utf8.contains(where: AuthenticationSyntax.isControl) else {
            throw CountersignError(.invalidBasicUser, "a Basic user-id cannot contain control characters")
        }
        guard !password.utf8.contains(where: AuthenticationSyntax.isControl) else {
            throw CountersignError(.invalidBasicPassword, "a Basic password cannot contain control characters")
        }
        var pair = Array(user.utf8)
        pair.append(UInt8(ascii: ":"))
        pair.append(contentsOf: password.utf8)
        return "Basic " + base64(pair)
    }

    /// Standard base64 with padding (RFC 4648 §4). A dozen lines here keep the core free of
    /// Foundation for the one encoding it needs.
    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        alphabet.withUTF8Buffer { table in
            var index = 0
            while index + 3 <= bytes.count {
                let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                out.append(table[Int(group >> 18 & 0x3F)])
                out.append(table[Int(group >> 12 & 0x3F)])
                out.append(table[Int(group >> 6 & 0x3F)])
                out.append(table[Int(group & 0x3F)])
                index += 3
            }
            let remaining = bytes.count - index
            guard remaining > 0 else { return }
            let group = UInt32(bytes[index]) << 16 | (remaining == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            out.append(table[Int(group >> 18 & 0x3F)])
            out.append(table[Int(group >> 12 & 0x3F)])
            out.append(remaining == 2 ? table[Int(group >> 6 & 0x3F)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
        return String(decoding: out, as: UTF8.self)
    }
}
