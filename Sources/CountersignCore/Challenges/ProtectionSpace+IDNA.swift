import Foundation

extension ProtectionSpace {
    /// An internationalized host name in its ASCII form: IDNA (UTS #46) as Foundation's `URL`
    /// applies it, which is how Apple's clients report such a host (`Bücher.example` is
    /// `xn--bcher-kva.example`). `host` itself when it is ASCII already, and when IDNA has no
    /// ASCII form for it (a label IDNA refuses comes back percent-encoded, and is left as sent).
    static func asciiForm(ofHost host: String) -> String {
        guard host.utf8.contains(where: { $0 >= 0x80 }) else { return host }
        var components = URLComponents()
        components.host = host
        guard let encoded = components.encodedHost, !encoded.isEmpty, !encoded.utf8.contains(UInt8(ascii: "%")) else { return host }
        return encoded
    }
}
