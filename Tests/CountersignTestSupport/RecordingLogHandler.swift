public import Logging
import Synchronization

/// Keeps every log line, rendered with its metadata, in memory. A value, as log handlers are:
/// metadata set on one logger (one request's) stays on that logger.
public struct RecordingLogHandler: LogHandler {
    private let lines: LogLines
    public var logLevel: Logger.Level = .trace
    public var metadata: Logger.Metadata = [:]

    public init(into lines: LogLines) {
        self.lines = lines
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let error = event.error.map { " error: \(String(reflecting: $0))" } ?? ""
        lines.lines.withLock { $0.append("\(event.level) \(event.message) \(all)\(error) \(event.source) \(event.function)") }
    }
}

/// The recorded lines, shared by the handler and the test.
public final class LogLines: Sendable {
    let lines = Mutex<[String]>([])

    public init() {}

    public var all: [String] { lines.withLock { $0 } }
}
