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
        let trimmed = connectionString.drop(while: \.isWhitespace)
        if trimmed.hasPrefix("postgresql://") || trimmed.hasPrefix("postgres://") {
            return redactedURI(String(trimmed))
        }
        return redactedKeyValue(connectionString)
    }

    /// The string with the secret options masked.
    public var redactedConnectionString: String {
        Self.redacted(connectionString)
    }

    private static func redactedURI(_ uri: String) -> String {
        guard let schemeEnd = uri.range(of: "://") else { return mask }
        let scheme = uri[..<schemeEnd.upperBound]
        let rest = uri[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        var tail = String(rest[authorityEnd...])

        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                authority = String(userInfo[..<colon]) + ":" + mask + String(authority[at...])
            }
        }
        if let question = tail.firstIndex(of: "?") {
            let path = tail[..<question]
            let query = tail[tail.index(after: question)...]
            let items = query.split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
                let key = item.prefix(while: { $0 != "=" })
                if secretKeywords.contains(key.lowercased()), item.contains("=") {
                    return key + "=" + mask
                }
                return String(item)
            }
            tail = path + "?" + items.joined(separator: "&")
        }
        return String(scheme) + authority + tail
    }

    private static func redactedKeyValue(_ string: String) -> String {
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
            output += secretKeywords.contains(keyword.lowercased()) ? mask : value
        }
    }
}
