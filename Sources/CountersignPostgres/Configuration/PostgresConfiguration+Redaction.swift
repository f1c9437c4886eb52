import Foundation

extension PostgresConfiguration {
    private static let secretKeywords: Set<String> = ["password", "sslpassword"]
    private static let mask = "***"

    /// `connectionString` with its secrets masked, for logs and error messages.
    ///
    /// Masks `password=` and `sslpassword=` in key/value strings (quoted or not) and in URI
    /// query parameters, and the password in a URI's `user:password@`. A string that does not
    /// parse is masked from the point where parsing failed, so nothing after it leaks.
    public static func redacted(_ connectionString: String) -> String {
        var masked: [String] = []
        return redacted(connectionString, masking: &masked)
    }

    /// `redacted(_:)`, also saying what it masked.
    private static func redacted(_ connectionString: String, masking masked: inout [String]) -> String {
        let trimmed = connectionString.drop(while: \.isWhitespace)
        if trimmed.hasPrefix("postgresql://") || trimmed.hasPrefix("postgres://") {
            return redactedURI(String(trimmed), masking: &masked)
        }
        return redactedKeyValue(connectionString, masking: &masked)
    }

    /// The string with the secret options masked.
    public var redactedConnectionString: String {
        Self.redacted(connectionString)
    }

    /// libpq's `message` about `connectionString`, fit for a log: libpq quotes the parts of a
    /// connection string it cannot parse, and where the string is a mistyped URI those parts can
    /// be the password, or pieces of it (a password with an `@` splits where libpq splits). So the
    /// string is masked wherever the message quotes it whole, and a message that still holds four
    /// characters of a password in a row (a shorter password: the whole of it, as a word) is
    /// withheld.
    public static func scrubbed(_ message: String, about connectionString: String) -> String {
        var masked: [String] = []
        let redactedString = redacted(connectionString, masking: &masked)
        let message = message.replacingOccurrences(of: connectionString, with: redactedString)
        let withheld = "libpq refused the connection string \(redactedString); its message is withheld because it quotes the password"
        for secret in masked.flatMap({ [$0, $0.removingPercentEncoding ?? $0] }) where !secret.isEmpty {
            let characters = Array(secret)
            guard characters.count >= 4 else {
                if quotesAsAWord(message, secret) { return withheld }
                continue
            }
            for start in 0...(characters.count - 4) where message.contains(String(characters[start..<start + 4])) {
                return withheld
            }
        }
        return message
    }

    private static func quotesAsAWord(_ message: String, _ word: String) -> Bool {
        var searched = message[...]
        while let range = searched.range(of: word) {
            let before = range.lowerBound == message.startIndex ? nil : message[message.index(before: range.lowerBound)]
            let after = range.upperBound == message.endIndex ? nil : message[range.upperBound]
            if !(before?.isLetter ?? false || before?.isNumber ?? false), !(after?.isLetter ?? false || after?.isNumber ?? false) { return true }
            searched = message[range.upperBound...]
        }
        return false
    }

    private static func redactedURI(_ uri: String, masking masked: inout [String]) -> String {
        guard let schemeEnd = uri.range(of: "://") else { return mask }
        let scheme = uri[..<schemeEnd.upperBound]
        let rest = uri[schemeEnd.upperBound...]
        // The user information ends at the last `@` before the query, not at the first `/`: a
        // password typed with a `/` in it must not end it early and be shown.
        let queryStart = rest.firstIndex(of: "?") ?? rest.endIndex
        var head = String(rest[..<queryStart])
        var tail = String(rest[queryStart...])

        if let at = head.lastIndex(of: "@") {
            let userInfo = head[..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                masked.append(String(userInfo[userInfo.index(after: colon)...]))
                head = String(userInfo[..<colon]) + ":" + mask + String(head[at...])
            }
        }
        if tail.hasPrefix("?") {
            let items = tail.dropFirst().split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
                let key = item.prefix(while: { $0 != "=" })
                if secretKeywords.contains(key.lowercased()), item.contains("=") {
                    masked.append(String(item.dropFirst(key.count + 1)))
                    return key + "=" + mask
                }
                return String(item)
            }
            tail = "?" + items.joined(separator: "&")
        }
        return String(scheme) + head + tail
    }

    private static func redactedKeyValue(_ string: String, masking masked: inout [String]) -> String {
        let characters = Array(string)
        var output = ""
        var index = 0
        var isFirstToken = true

        func skipWhitespace() {
            while index < characters.count, characters[index].isWhitespace {
                output.append(characters[index])
                index += 1
            }
        }

        while true {
            skipWhitespace()
            guard index < characters.count else { return output }
            var keyword = ""
            while index < characters.count, characters[index] != "=", !characters[index].isWhitespace {
                keyword.append(characters[index])
                index += 1
            }
            output += keyword
            skipWhitespace()
            guard index < characters.count, characters[index] == "=" else {
                // A lone word is a plain database name, which is fine; anything else is malformed.
                if index >= characters.count, isFirstToken { return output }
                return output + mask
            }
            isFirstToken = false
            output.append("=")
            index += 1
            skipWhitespace()

            var value = ""
            if index < characters.count, characters[index] == "'" {
                value.append("'")
                index += 1
                var closed = false
                while index < characters.count {
                    let character = characters[index]
                    if character == "\\", index + 1 < characters.count {
                        value.append(character)
                        value.append(characters[index + 1])
                        index += 2
                        continue
                    }
                    value.append(character)
                    index += 1
                    if character == "'" {
                        closed = true
                        break
                    }
                }
                guard closed else { return output + mask }
            } else {
                while index < characters.count, !characters[index].isWhitespace {
                    if characters[index] == "\\", index + 1 < characters.count {
                        value.append(characters[index])
                        index += 1
                    }
                    value.append(characters[index])
                    index += 1
                }
            }
            if secretKeywords.contains(keyword.lowercased()) {
                masked.append(value)
                output += mask
            } else {
                output += value
            }
        }
    }
}
