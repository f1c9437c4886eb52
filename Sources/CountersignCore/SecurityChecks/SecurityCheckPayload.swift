/// Limits on the JSON a security check carries: its challenge, and the failure and success
/// payloads clients report.
public enum SecurityCheckPayload {
    /// Largest payload of one check, in bytes of JSON text.
    public static let maximumBytes = 8 * 1024
    /// Deepest nesting of arrays and objects in one payload.
    public static let maximumDepth = 16

    /// Throws `security_check_payload_too_large` when `payload` is larger or deeper than allowed.
    public static func checkSize(_ payload: JSONValue, field: String) throws {
        guard payload.approximateSize <= maximumBytes else {
            throw CountersignError(.securityCheckPayloadTooLarge, "'\(field)' is larger than \(maximumBytes) bytes")
        }
        guard payload.depth <= maximumDepth else {
            throw CountersignError(.securityCheckPayloadTooLarge, "'\(field)' nests deeper than \(maximumDepth) levels")
        }
    }

    /// A failure or success payload: a JSON object within the limits.
    public static func validateReport(_ payload: JSONValue, field: String) throws {
        guard payload.objectValue != nil else {
            throw CountersignError(.invalidSecurityChecks, "'\(field)' must be a JSON object, as the server sent it (send {} when it sent nothing)")
        }
        try checkSize(payload, field: field)
    }

    /// The server's message in a failure payload (`{"failure": "Account blocked"}`), cut to 200
    /// characters for the admin listing; `nil` when the payload carries none.
    public static func failureMessage(in payload: JSONValue) -> String? {
        message(payload["failure"])
    }

    /// The server's message in a check it sends again after a wrong answer (MobileFirst's
    /// `{"remainingAttempts": 1, "errorMsg": "Pin code is not valid."}`); `nil` in a first
    /// challenge, whose `errorMsg` is null or absent.
    public static func rechallengeMessage(in challenge: JSONValue) -> String? {
        message(challenge["errorMsg"])
    }

    /// A server's message, cleaned of control characters and cut to 200 characters for the
    /// admin listing.
    private static func message(_ value: JSONValue?) -> String? {
        guard let text = value?.stringValue, !text.isEmpty else { return nil }
        // Cut by scalars, as every length here is counted: one grapheme can hold thousands.
        var cleaned = String.UnicodeScalarView()
        cleaned.append(contentsOf: text.unicodeScalars.lazy.filter { !Validation.isControl($0) }.prefix(200))
        return String(cleaned)
    }
}
