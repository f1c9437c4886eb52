// The one file that talks to libpq. No libpq type (PGconn, PGresult, Oid, ...) leaves it:
// the rest of the module sees `LibPQConnection`, `RawResult` and `PostgresError`.
//
// Every function here that does I/O blocks; callers run them on the pool's thread pool.
// Connections are in libpq's nonblocking mode all the same, and every statement goes through
// `PQsend*` and a `poll` bounded by the response timeout, so that a server that stops answering
// (hung, stopped, cut off by the network) cannot hold a thread for ever: libpq has no timeout of
// its own for statements, and `statement_timeout` is enforced by the very server that hangs.

internal import CLibPQ
import CountersignCrypto
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A statement's outcome, copied out of libpq's memory.
struct RawResult: Sendable {
    var columns: [String]
    var rows: [[String?]]
    var affectedRows: Int
    var commandStatus: String
}

/// Where a connection is with respect to transactions (`PQtransactionStatus`).
enum TransactionState: Sendable, Equatable {
    case idle
    case active
    case inTransaction
    case failedTransaction
    case unknown
}

/// Opens connections: what `PQconnectdbParams` needs plus the per-session setup.
struct ConnectionFactory: Sendable {
    let parameters: [(keyword: String, value: String)]
    let setupSQL: String
    /// How long a statement may wait for the server's answer; nil waits for ever.
    let responseTimeout: Duration?
    let logger: Logger

    init(configuration: PostgresConfiguration, logger: Logger) {
        self.parameters = configuration.connectionParameters(environment: ProcessInfo.processInfo.environment)
        self.setupSQL = configuration.sessionSetupSQL
        self.responseTimeout = configuration.responseTimeout
        self.logger = logger
    }

    /// Opens, checks and sets up a connection. Blocks for at most `connect_timeout` per host.
    func connect(id: Int) throws(PostgresError) -> LibPQConnection {
        let handle = withCStringArray(parameters.map(\.keyword)) { keywords in
            withCStringArray(parameters.map(\.value)) { values in
                PQconnectdbParams(keywords, values, 1)
            }
        }
        guard let handle else {
            throw PostgresError(.connectionFailed, reason: "libpq could not allocate a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let connectionString = parameters.first { $0.keyword == "dbname" }?.value ?? ""
            let message = LibPQConnection.errorMessage(of: handle).map { PostgresConfiguration.scrubbed($0, about: connectionString) }
            PQfinish(handle)
            throw PostgresError(.connectionFailed, reason: "could not connect to the server", serverMessage: message)
        }
        var logger = logger
        logger[metadataKey: "db.connection"] = "\(id)"
        guard PQsetnonblocking(handle, 1) == 0 else {
            PQfinish(handle)
            throw PostgresError(.connectionFailed, reason: "libpq could not make the connection nonblocking")
        }
        let connection = LibPQConnection(handle: handle, id: id, responseTimeout: responseTimeout, logger: logger)
        do {
            _ = try connection.execSimple(setupSQL)
        } catch {
            connection.finish()
            var failure = error
            failure.code = .connectionFailed
            failure.reason = "the session setup failed"
            throw failure
        }
        logger.debug("opened a database connection", metadata: ["db.server_version": "\(PQserverVersion(handle))"])
        return connection
    }
}

/// One libpq connection, with its prepared statements.
///
/// `@unchecked Sendable`: a `PGconn` must never be used by two threads at once, and it is
/// not. A `LibPQConnection` is reachable either from the pool's idle list (inside the
/// pool's `Mutex`) or from exactly one lease, whose holder runs one thread-pool job at a
/// time on it; handing it between the two goes through that `Mutex` and a continuation,
/// which order all accesses. Nothing else keeps a reference.
final class LibPQConnection: @unchecked Sendable {
    private var handle: OpaquePointer?
    private var statements = StatementCache(capacity: 256)
    private var isPoisoned = false
    private let noticeSink: NoticeSink
    private let responseTimeout: Duration?
    /// Set by ``liftResponseTimeout()`` for one lease's long statements (migrations).
    private var isResponseTimeoutLifted = false
    let id: Int
    let logger: Logger

    fileprivate init(handle: OpaquePointer, id: Int, responseTimeout: Duration?, logger: Logger) {
        self.handle = handle
        self.id = id
        self.responseTimeout = responseTimeout
        self.logger = logger
        self.noticeSink = NoticeSink(logger: logger)
        // Without this, libpq prints NOTICEs ("relation ... already exists, skipping") to stderr.
        // It is also how we learn of a FATAL error the server sent while the connection sat idle.
        PQsetNoticeReceiver(
            handle,
            { context, result in
                guard let context, let result else { return }
                let sink = Unmanaged<NoticeSink>.fromOpaque(context).takeUnretainedValue()
                let severity = PQresultErrorField(result, Int32(UInt8(ascii: "V"))).map { String(cString: $0) }
                let message = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) } ?? ""
                sink.receive(severity: severity ?? "NOTICE", message: message)
            },
            Unmanaged.passUnretained(noticeSink).toOpaque()
        )
    }

    deinit {
        finish()
    }

    /// Closes the connection (sends Terminate). Idempotent.
    func finish() {
        guard let handle else { return }
        PQfinish(handle)
        self.handle = nil
    }

    /// Lets the statements that follow wait for the server as long as it takes, until
    /// ``restoreResponseTimeout()``.
    func liftResponseTimeout() {
        isResponseTimeoutLifted = true
    }

    func restoreResponseTimeout() {
        isResponseTimeoutLifted = false
    }

    /// Whether the connection can take another statement.
    var isUsable: Bool {
        guard let handle, !isPoisoned else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    var transactionState: TransactionState {
        guard let handle else { return .unknown }
        switch PQtransactionStatus(handle) {
        case PQTRANS_IDLE: return .idle
        case PQTRANS_ACTIVE: return .active
        case PQTRANS_INTRANS: return .inTransaction
        case PQTRANS_INERROR: return .failedTransaction
        default: return .unknown
        }
    }

    /// Checks, without blocking, that an idle connection is still alive: reads whatever the
    /// server sent while it sat in the pool (a termination notice, EOF after a restart).
    func isAliveAfterIdling() -> Bool {
        guard isUsable, let handle else { return false }
        let socket = PQsocket(handle)
        guard socket >= 0 else { return false }
        for _ in 0..<8 {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 0)
            if ready == 0 { break }
            if ready < 0 {
                if errno == EINTR { continue }
                return false
            }
            guard PQconsumeInput(handle) != 0 else { return false }
            while let notification = PQnotifies(handle) {
                PQfreemem(notification)
            }
            // A FATAL error while idle is the server saying goodbye (pg_terminate_backend,
            // shutdown); the socket may not have closed yet, but the session is over.
            guard PQstatus(handle) == CONNECTION_OK, !noticeSink.sawFatal else { return false }
        }
        return PQstatus(handle) == CONNECTION_OK && transactionState == .idle
    }

    /// Waits at most `timeout` for notifications of the channels this connection listens to,
    /// and returns those that came (none when the time ran out). Throws once the connection is
    /// lost, including when the server ends the session while it waits.
    func notifications(waitingAtMost timeout: Duration) throws(PostgresError) -> [PostgresNotification] {
        let handle = try requireHandle()
        let waiting = Self.takeNotifications(handle)
        guard waiting.isEmpty else { return waiting }
        let socket = PQsocket(handle)
        guard socket >= 0 else {
            throw PostgresError(.connectionLost, reason: "the connection to the server was lost", sqlState: "08006")
        }
        // Bytes OpenSSL already took off the socket raise no socket event (see `waitForSocket`).
        let tlsPending = PQsslStruct(handle, "OpenSSL").map { TLSReadBuffer.pendingBytes(ssl: $0) > 0 } ?? false
        if !tlsPending {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: PostgresConfiguration.wholeMilliseconds(timeout)))
            if ready == 0 || (ready < 0 && errno == EINTR) { return [] }
            if ready < 0 { throw abandon(reason: "could not wait for the server (poll failed)") }
        }
        guard PQconsumeInput(handle) != 0, PQstatus(handle) == CONNECTION_OK, !noticeSink.sawFatal else {
            throw abandon(reason: "the server ended the session")
        }
        return Self.takeNotifications(handle)
    }

    private static func takeNotifications(_ handle: OpaquePointer) -> [PostgresNotification] {
        var received: [PostgresNotification] = []
        while let notification = PQnotifies(handle) {
            received.append(
                PostgresNotification(
                    channel: String(cString: notification.pointee.relname),
                    payload: String(cString: notification.pointee.extra)
                )
            )
            PQfreemem(notification)
        }
        return received
    }

    /// Runs one statement. Without parameters it goes unprepared through the extended
    /// protocol (one statement only); with parameters through a cached prepared statement.
    func run(_ sql: String, _ parameters: [EncodedParameter]) throws(PostgresError) -> RawResult {
        try requireSQLText(sql)
        guard !parameters.isEmpty else {
            return try execUnprepared(sql)
        }
        let key = StatementCache.Key(sql: sql, parameterTypes: parameters.map(\.typeOID))
        if let name = statements.name(for: key) {
            do {
                return try execPrepared(name, parameters)
            } catch {
                // 0A000: "cached plan must not change result type" after a schema change;
                // 26000: the statement is gone (DISCARD ALL, DEALLOCATE ALL). Outside a
                // transaction block the failed statement did nothing, so one retry is safe.
                guard error.sqlState == "0A000" || error.sqlState == "26000" else { throw error }
                _ = statements.remove(key)
                if error.sqlState == "0A000" { deallocate(name) }
                guard isUsable, transactionState == .idle else { throw error }
                logger.debug("re-preparing a statement after the server dropped its plan")
            }
        }
        let name = statements.makeName()
        try prepare(name, sql, parameterTypes: key.parameterTypes)
        if let evicted = statements.insert(key, name: name) {
            deallocate(evicted)
        }
        return try execPrepared(name, parameters)
    }

    /// Runs SQL through the simple query protocol: several statements allowed, no parameters.
    @discardableResult
    func execSimple(_ sql: String) throws(PostgresError) -> RawResult {
        try requireSQLText(sql)
        let handle = try requireHandle()
        try sent(PQsendQuery(handle, sql))
        return try consume(awaitResult(handle))
    }

    /// Rolls back a transaction the caller left open, so the next user starts clean.
    func rollBackLeftoverTransaction() {
        switch transactionState {
        case .inTransaction, .failedTransaction:
            logger.debug("rolling back a transaction left open on the connection")
            _ = try? execSimple("ROLLBACK")
        case .idle, .active, .unknown:
            break
        }
    }

    // MARK: - Statements

    private func execUnprepared(_ sql: String) throws(PostgresError) -> RawResult {
        let handle = try requireHandle()
        try sent(PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 0))
        return try consume(awaitResult(handle))
    }

    private func prepare(_ name: String, _ sql: String, parameterTypes: [UInt32]) throws(PostgresError) {
        let handle = try requireHandle()
        let dispatched = parameterTypes.withUnsafeBufferPointer { types in
            PQsendPrepare(handle, name, sql, Int32(types.count), types.baseAddress)
        }
        try sent(dispatched)
        _ = try consume(awaitResult(handle))
    }

    private func execPrepared(_ name: String, _ parameters: [EncodedParameter]) throws(PostgresError) -> RawResult {
        let handle = try requireHandle()
        let dispatched = withParameterArrays(parameters) { values, lengths, formats in
            PQsendQueryPrepared(handle, name, Int32(parameters.count), values, lengths, formats, 0)
        }
        try sent(dispatched)
        return try consume(awaitResult(handle))
    }

    private func deallocate(_ name: String) {
        guard isUsable else { return }
        // Best effort: a statement left behind only costs server memory until disconnect.
        _ = try? execSimple("DEALLOCATE \(name)")
    }

    // MARK: - Waiting for the server

    /// Checks what a `PQsend*` call returned: 0 means nothing was queued (connection broken,
    /// another statement still running).
    private func sent(_ dispatched: Int32) throws(PostgresError) {
        guard dispatched == 1 else { throw failure(from: nil) }
    }

    /// Sends what the last `PQsend*` queued and collects its results, as `PQexec` does (the last
    /// result is returned; COPY or a broken connection stops the collection), but waits at most
    /// the response timeout for the server. Past it the connection is closed, since the statement
    /// is still with the server and the connection cannot take another, and the call fails with
    /// ``PostgresError/Code/connectionLost``.
    private func awaitResult(_ handle: OpaquePointer) throws(PostgresError) -> OpaquePointer? {
        let deadline = isResponseTimeoutLifted ? nil : responseTimeout.map { ContinuousClock.now + $0 }
        // libpq's recipe for a nonblocking connection: flush until done, reading whenever the
        // server has something to say, so that neither side waits on a full buffer.
        while true {
            let flushed = PQflush(handle)
            guard flushed == 1 else { break }  // 0: all sent; -1: broken, which reading reports
            let ready = try waitForSocket(handle, events: Int16(POLLIN | POLLOUT), until: deadline)
            // Readable or hung up: take in what the server sent.
            let onlyWritable = ready & Int16(POLLOUT) != 0 && ready & Int16(POLLIN) == 0
            if !onlyWritable, PQconsumeInput(handle) == 0 { break }
        }
        var last: OpaquePointer?
        while true {
            while PQisBusy(handle) != 0 {
                do {
                    _ = try waitForSocket(handle, events: Int16(POLLIN), until: deadline)
                } catch {
                    PQclear(last)
                    throw error
                }
                guard PQconsumeInput(handle) != 0 else {
                    // A broken connection makes PQgetResult report the failure at once; one libpq
                    // still calls good would have it wait for the server with no deadline.
                    if PQstatus(handle) == CONNECTION_BAD { break }
                    PQclear(last)
                    throw abandon(reason: "could not read from the server")
                }
            }
            guard let result = PQgetResult(handle) else { break }
            PQclear(last)
            last = result
            switch PQresultStatus(result) {
            case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
                return last
            default:
                if PQstatus(handle) == CONNECTION_BAD { return last }
            }
        }
        return last
    }

    /// Waits until the connection is ready for `events` and returns what it is ready for, or
    /// throws once `deadline` passes.
    ///
    /// On a TLS connection OpenSSL may hold the rest of a record that `PQconsumeInput` read only
    /// in part (it reads at most the free space of libpq's buffer; PostgreSQL writes records of
    /// 8 KiB, poolers and proxies up to 16 KiB), and no socket event announces data already off
    /// the socket: that counts as readable, as libpq's own wait counts it.
    private func waitForSocket(
        _ handle: OpaquePointer,
        events: Int16,
        until deadline: ContinuousClock.Instant?
    ) throws(PostgresError) -> Int16 {
        let socket = PQsocket(handle)
        guard socket >= 0 else {
            throw PostgresError(.connectionLost, reason: "the connection to the server was lost", sqlState: "08006")
        }
        if events & Int16(POLLIN) != 0, let ssl = PQsslStruct(handle, "OpenSSL"), TLSReadBuffer.pendingBytes(ssl: ssl) > 0 {
            return Int16(POLLIN)
        }
        while true {
            var milliseconds: Int32 = -1
            if let deadline {
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else { throw giveUpUnanswered() }
                milliseconds = Int32(clamping: PostgresConfiguration.wholeMilliseconds(remaining))
            }
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return descriptor.revents }
            if ready < 0, errno != EINTR {
                throw abandon(reason: "could not wait for the server (poll failed)")
            }
        }
    }

    private func giveUpUnanswered() -> PostgresError {
        let waited = responseTimeout ?? .zero
        logger.warning(
            "the database did not answer a statement in time; closing its connection",
            metadata: ["db.response_timeout": "\(waited)"]
        )
        return abandon(reason: "the server did not answer within \(waited) (statement timeout plus connect timeout)")
    }

    /// Closes a connection whose statement is still out, which it can therefore never finish.
    private func abandon(reason: String) -> PostgresError {
        isPoisoned = true
        finish()
        return PostgresError(.connectionLost, reason: reason, sqlState: "08006")
    }

    // MARK: - Results and errors

    private func consume(_ result: OpaquePointer?) throws(PostgresError) -> RawResult {
        defer { PQclear(result) }
        guard let result else {
            throw failure(from: nil)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return Self.copy(result)
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            // The connection is now in COPY mode and useless for statements: retire it.
            isPoisoned = true
            throw PostgresError(.unsupportedStatement, reason: "COPY is not supported through this API")
        default:
            throw failure(from: result)
        }
    }

    private func failure(from result: OpaquePointer?) -> PostgresError {
        func field(_ code: UInt8) -> String? {
            guard let result, let value = PQresultErrorField(result, Int32(code)) else { return nil }
            return String(cString: value)
        }
        let lost = handle.map { PQstatus($0) == CONNECTION_BAD } ?? true
        let serverMessage = field(UInt8(ascii: "M")) ?? handle.flatMap { Self.errorMessage(of: $0) }
        var error = PostgresError(
            lost ? .connectionLost : .queryFailed,
            reason: lost ? "the connection to the server was lost" : "the server refused the statement",
            sqlState: field(UInt8(ascii: "C")),
            constraintName: field(UInt8(ascii: "n")),
            column: field(UInt8(ascii: "c")),
            serverMessage: serverMessage
        )
        if lost, error.sqlState == nil {
            error.sqlState = "08006"
        }
        return error
    }

    private static func copy(_ result: OpaquePointer) -> RawResult {
        let rowCount = PQntuples(result)
        let columnCount = PQnfields(result)
        var columns: [String] = []
        columns.reserveCapacity(Int(columnCount))
        for column in 0..<columnCount {
            columns.append(PQfname(result, column).map { String(cString: $0) } ?? "?column?")
        }
        var rows: [[String?]] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                if PQgetisnull(result, row, column) != 0 {
                    values.append(nil)
                } else {
                    let length = Int(PQgetlength(result, row, column))
                    let bytes = UnsafeRawBufferPointer(start: PQgetvalue(result, row, column), count: length)
                    values.append(String(decoding: bytes, as: UTF8.self))
                }
            }
            rows.append(values)
        }
        let affected = PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
        let status = PQcmdStatus(result).map { String(cString: $0) } ?? ""
        return RawResult(columns: columns, rows: rows, affectedRows: affected, commandStatus: status)
    }

    fileprivate static func errorMessage(of handle: OpaquePointer) -> String? {
        guard let message = PQerrorMessage(handle) else { return nil }
        let text = String(cString: message).trimmingTrailingNewlines
        return text.isEmpty ? nil : text
    }

    private func requireHandle() throws(PostgresError) -> OpaquePointer {
        guard let handle, !isPoisoned else {
            throw PostgresError(.connectionLost, reason: "the connection is closed", sqlState: "08003")
        }
        return handle
    }

    private func requireSQLText(_ sql: String) throws(PostgresError) {
        guard !sql.utf8.contains(0) else {
            throw PostgresError(.invalidParameter, reason: "the SQL text contains a NUL character")
        }
    }
}

/// Receives libpq's notices; kept apart from the connection so that the C callback never
/// touches an object that is being deinitialised. Used only by the thread that holds the
/// connection, like the connection itself.
private final class NoticeSink {
    let logger: Logger
    private(set) var sawFatal = false

    init(logger: Logger) {
        self.logger = logger
    }

    func receive(severity: String, message: String) {
        if severity == "FATAL" || severity == "PANIC" {
            sawFatal = true
        }
        // Notices can quote values: debug level only.
        logger.debug("database notice", metadata: ["db.notice.severity": "\(severity)", "db.notice": "\(message)"])
    }
}

// MARK: - Connection strings

enum LibPQConnectionString {
    /// The options set in `connectionString` (key/value or URI), parsed by libpq itself.
    static func options(of connectionString: String) throws(PostgresError) -> [(keyword: String, value: String)] {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &errorMessage) else {
            // libpq's message quotes pieces of the string, which may be a password: dropped.
            if let errorMessage { PQfreemem(errorMessage) }
            throw PostgresError(.invalidConnectionString, reason: "libpq could not parse the connection string")
        }
        defer { PQconninfoFree(options) }
        var result: [(keyword: String, value: String)] = []
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                result.append((String(cString: keyword), String(cString: value)))
            }
            option += 1
        }
        return result
    }

    /// A key/value connection string with each value quoted as libpq expects.
    static func keyValueString(_ options: [(keyword: String, value: String)]) -> String {
        options.map { "\($0.keyword)=\(quote($0.value))" }.joined(separator: " ")
    }

    static func quote(_ value: String) -> String {
        var quoted = "'"
        for character in value {
            if character == "'" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "'"
    }
}

// MARK: - C arrays

/// Calls `body` with a NULL-terminated array of C strings.
private func withCStringArray<Result>(
    _ strings: [String],
    _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result
) -> Result {
    let owned: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    defer {
        for pointer in owned { free(pointer) }
    }
    let pointers: [UnsafePointer<CChar>?] = owned.map { $0.map { UnsafePointer($0) } } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

/// Calls `body` with libpq's parallel arrays of parameter values, lengths and formats.
private func withParameterArrays<Result>(
    _ parameters: [EncodedParameter],
    _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> Result
) -> Result {
    let owned: [UnsafeMutablePointer<CChar>?] = parameters.map { parameter in
        guard let bytes = parameter.bytes else { return nil }
        // Text values must end in NUL; binary ones carry their length, and never 0 bytes of storage.
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        bytes.withUnsafeBytes { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress ?? UnsafeRawPointer(buffer), byteCount: bytes.count)
        }
        buffer[bytes.count] = 0
        return buffer
    }
    defer {
        for pointer in owned { pointer?.deallocate() }
    }
    let values: [UnsafePointer<CChar>?] = owned.map { $0.map { UnsafePointer($0) } }
    let lengths: [Int32] = parameters.map { Int32(clamping: $0.bytes?.count ?? 0) }
    let formats: [Int32] = parameters.map { $0.isBinary ? 1 : 0 }
    return values.withUnsafeBufferPointer { values in
        lengths.withUnsafeBufferPointer { lengths in
            formats.withUnsafeBufferPointer { formats in
                body(values.baseAddress, lengths.baseAddress, formats.baseAddress)
            }
        }
    }
}

extension String {
    fileprivate var trimmingTrailingNewlines: String {
        var text = self
        while text.last?.isNewline == true { text.removeLast() }
        return text
    }
}
