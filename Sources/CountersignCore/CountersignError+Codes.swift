/// The codes shared by every endpoint. Features add theirs beside their own code.
extension CountersignError.Code {
    // Request shape.
    public static let malformedJSON = Self("malformed_json", kind: .invalidInput)
    public static let malformedBody = Self("malformed_body", kind: .invalidInput)
    public static let malformedRequest = Self("malformed_request", kind: .invalidInput)
    public static let headersTooLarge = Self("headers_too_large", kind: .headersTooLarge)
    public static let missingField = Self("missing_field", kind: .invalidInput)
    public static let invalidFieldType = Self("invalid_field_type", kind: .invalidInput)
    public static let invalidEnumValue = Self("invalid_enum_value", kind: .invalidInput)
    public static let invalidField = Self("invalid_field", kind: .invalidInput)
    public static let unknownField = Self("unknown_field", kind: .invalidInput)
    public static let invalidID = Self("invalid_id", kind: .invalidInput)
    public static let invalidQuery = Self("invalid_query", kind: .invalidInput)
    public static let bodyTooLarge = Self("body_too_large", kind: .payloadTooLarge)
    public static let unsupportedMediaType = Self("unsupported_media_type", kind: .unsupportedMediaType)
    public static let routeNotFound = Self("route_not_found", kind: .notFound)
    public static let methodNotAllowed = Self("method_not_allowed", kind: .methodNotAllowed)
    public static let methodNotImplemented = Self("method_not_implemented", kind: .notImplemented)

    // Who is asking.
    public static let unauthenticated = Self("unauthenticated", kind: .unauthenticated)
    public static let invalidAPIKey = Self("invalid_api_key", kind: .unauthenticated)
    public static let insufficientRole = Self("insufficient_role", kind: .forbidden)
    public static let tenantDisabled = Self("tenant_disabled", kind: .forbidden)
    /// A client key bound to one `clientId` opening a session under another.
    public static let clientIDNotAllowed = Self("client_id_not_allowed", kind: .forbidden)

    // Objects.
    public static let notFound = Self("not_found", kind: .notFound)
    public static let tenantNameTaken = Self("tenant_name_taken", kind: .conflict)

    // The service itself.
    public static let databaseUnavailable = Self("database_unavailable", kind: .unavailable)
    public static let serviceBusy = Self("service_busy", kind: .unavailable)
    public static let notReady = Self("not_ready", kind: .unavailable)
    public static let internalError = Self("internal_error", kind: .internalFailure)
}
