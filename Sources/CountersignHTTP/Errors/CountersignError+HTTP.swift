import CountersignCore
import CountersignPostgres
import HTTPTypes
import Hummingbird

extension CountersignError.Kind {
    /// The one place where error kinds become HTTP statuses.
    var status: HTTPResponse.Status {
        switch self {
        case .invalidInput: .badRequest
        case .unauthenticated: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .conflict: .conflict
        case .payloadTooLarge: .contentTooLarge
        case .headersTooLarge: .requestHeaderFieldsTooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .notImplemented: .notImplemented
        case .unavailable: .serviceUnavailable
        case .internalFailure: .internalServerError
        }
    }
}

extension CountersignError {
    /// Translates whatever a handler threw into the error the client sees. Anything this does
    /// not recognise becomes an opaque `internal_error`: its text may hold things a client
    /// must not see, and goes to the log instead.
    /// SQLSTATEs of a schema that lacks what this build uses: undefined table, column,
    /// function, object.
    private static let schemaBehindStates: Set<String> = ["42P01", "42703", "42883", "42704"]

    static func from(_ error: any Error) -> (error: CountersignError, recognised: Bool) {
        switch error {
        case let error as CountersignError:
            return (error, true)
        case let error as PostgresError:
            switch error.code {
            case .poolTimeout:
                return (CountersignError(.serviceBusy, "the service is busy; retry shortly"), true)
            case .connectionFailed, .connectionLost, .poolClosed:
                return (CountersignError(.databaseUnavailable, "the database is unavailable; retry shortly"), true)
            default:
                if error.isQueryCanceled {
                    return (CountersignError(.serviceBusy, "the database took too long; retry shortly"), true)
                }
                if error.isDeadlockDetected || error.isSerializationFailure {
                    return (CountersignError(.serviceBusy, "the request conflicted with a concurrent change; retry"), true)
                }
                // As a database away: a 503 to retry, never an internal error (a decision that
                // cannot be recorded is not one).
                if error.isWriteUnavailable {
                    return (CountersignError(.databaseUnavailable, "the database cannot take writes now; retry shortly"), true)
                }
                if let state = error.sqlState, Self.schemaBehindStates.contains(state) {
                    // Served with --no-migrate before `countersign migrate` ran: /readyz says so too.
                    // Not recognised, so that the log names what is missing.
                    return (CountersignError(.databaseUnavailable, "the database schema is older than this build; retry once it is migrated"), false)
                }
                return (CountersignError(.internalError, "internal error"), false)
            }
        case let error as HTTPError:
            switch error.status {
            case .contentTooLarge:
                return (CountersignError(.bodyTooLarge, "the request body is too large"), true)
            case .notFound:
                return (CountersignError(.routeNotFound, "no such route"), true)
            default:
                let kind: CountersignError.Kind = error.status.code < 500 ? .invalidInput : .internalFailure
                return (CountersignError(.init("http_\(error.status.code)", kind: kind), error.status.reasonPhrase), true)
            }
        case is CancellationError:
            return (CountersignError(.serviceBusy, "the request was cancelled"), true)
        default:
            return (CountersignError(.internalError, "internal error"), false)
        }
    }
}
