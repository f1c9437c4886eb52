/// The `# HELP` line of each of our metric families. swift-metrics has no place for help text
/// (its Prometheus backend registers every family with none), so `/metrics` adds the lines to
/// the registry's text as it serves it. A family of ours missing here is a test failure
/// (`ProbeTests`), so a new metric cannot ship undescribed.
enum MetricHelp {
    static let texts: [String: String] = [
        "countersign_http_requests_total": "HTTP requests answered, by route template (unmatched when no route took the request), method and status.",
        "countersign_http_request_duration_seconds": "Time from a request's head to its answer, by route template, method and status.",
        "countersign_decisions_total": "Challenge decisions recorded, by disposition and by what decided them.",
        "countersign_decision_batch_size": "Decisions recorded per transaction by the group-commit writer.",
        "countersign_security_check_answers_total": "Security-check answers given, by action.",
        "countersign_db_pool_connections": "PostgreSQL connections of the pool, in use and idle.",
        "countersign_db_pool_waiters": "Callers waiting for a pool connection.",
        "countersign_db_pool_acquire_timeouts_total": "Calls that found no pool connection free in time (answered 503).",
        "countersign_db_reachable": "1 while the last attempt to open a database connection succeeded, else 0.",
        "countersign_db_listening": "1 while the instance listens on the channel (hears of revocations made through other instances), else 0.",
        "countersign_build_info": "Always 1; its version label names the running release.",
    ]

    /// `exposition` with a `# HELP` line before each `# TYPE` line of a family in ``texts``.
    static func adding(to exposition: [UInt8]) -> [UInt8] {
        var described: [UInt8] = []
        described.reserveCapacity(exposition.count + texts.count * 96)
        let typePrefix = Array("# TYPE ".utf8)
        for line in exposition.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            if line.starts(with: typePrefix) {
                let family = line.dropFirst(typePrefix.count).prefix { $0 != UInt8(ascii: " ") }
                if let help = texts[String(decoding: family, as: UTF8.self)] {
                    described += Array("# HELP ".utf8) + family + [UInt8(ascii: " ")] + Array(help.utf8) + [UInt8(ascii: "\n")]
                }
            }
            described += line + [UInt8(ascii: "\n")]
        }
        // `split` saw the text's final newline as one more (empty) line.
        if exposition.last == UInt8(ascii: "\n") || exposition.isEmpty { described.removeLast() }
        return described
    }
}
