import Logging

/// swift-log's `StreamLogHandler` on standard error, with the logger's own metadata formatted
/// when a line is written rather than whenever it is set.
///
/// Hummingbird gives every request a logger carrying its request id, and `StreamLogHandler`
/// formats its whole metadata on every change: a sort, a join and an allocation per request,
/// even at levels where the request never logs a line. Here the metadata is only kept, and
/// handed to the stream handler as the event's own when a line is written, which formats it
/// exactly as before.
struct TextLogHandler: LogHandler {
    private var stream: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(label: String) {
        stream = StreamLogHandler.standardError(label: label)
    }

    var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            // The event's own metadata wins over the logger's, as in StreamLogHandler.
            event.metadata = metadata.merging(event.metadata ?? [:]) { _, own in own }
        }
        stream.log(event: event)
    }
}
