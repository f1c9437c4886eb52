import Logging

/// swift-log's `StreamLogHandler` on standard error, with the logger's own metadata formatted
/// when a line is written rather than whenever it is set.
///
/// Hummingbird gives every request a logger carrying its request id, and `StreamLogHandler`
/// formats its whole metadata on every change: a sort, a join and an allocation per request,
/// even at levels where the request never logs a line. Here the metadata is only kept, and
/// handed to the stream handler with the provider's and the event's own when a line is written,
/// ranked as that handler ranks them, so the line reads as before.
struct TextLogHandler: LogHandler {
    /// Without metadata or provider of its own: both are merged here.
    private var stream: StreamLogHandler
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String) {
        stream = StreamLogHandler.standardError(label: label, metadataProvider: nil)
        metadataProvider = LoggingSystem.metadataProvider
    }

    var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        // The logger's, then the provider's, then the event's own, each winning over the last.
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, provided in provided } }
        if let own = event.metadata { merged.merge(own) { _, own in own } }
        event.metadata = merged
        stream.log(event: event)
    }
}
