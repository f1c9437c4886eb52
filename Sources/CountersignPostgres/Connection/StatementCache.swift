/// The prepared statements of one connection, keyed by SQL text and parameter types,
/// least recently used evicted first.
///
/// Pure bookkeeping: the caller prepares and deallocates on the server.
struct StatementCache {
    struct Key: Hashable {
        var sql: String
        var parameterTypes: [UInt32]
    }

    private struct Entry {
        var name: String
        var lastUse: UInt64
    }

    let capacity: Int
    private var entries: [Key: Entry] = [:]
    private var clock: UInt64 = 0
    private var nextNumber = 1

    init(capacity: Int) {
        precondition(capacity > 0, "a statement cache needs room for at least one statement")
        self.capacity = capacity
    }

    var count: Int { entries.count }

    /// The server-side name of the statement, marking it as just used.
    mutating func name(for key: Key) -> String? {
        guard entries[key] != nil else { return nil }
        clock += 1
        entries[key]!.lastUse = clock
        return entries[key]!.name
    }

    /// A fresh name for `key`; the caller prepares it and then calls ``insert(_:name:)``.
    mutating func makeName() -> String {
        defer { nextNumber += 1 }
        return "countersign_\(nextNumber)"
    }

    /// Records a prepared statement. Returns the name of the statement evicted to make room,
    /// which the caller should deallocate.
    mutating func insert(_ key: Key, name: String) -> String? {
        var evicted: String?
        if entries[key] == nil, entries.count >= capacity,
            let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })
        {
            evicted = oldest.value.name
            entries[oldest.key] = nil
        }
        clock += 1
        entries[key] = Entry(name: name, lastUse: clock)
        return evicted
    }

    /// Forgets one statement (e.g. after the server said its cached plan is stale).
    mutating func remove(_ key: Key) -> String? {
        entries.removeValue(forKey: key)?.name
    }
}
