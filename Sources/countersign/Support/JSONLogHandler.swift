import CountersignHTTP
import Foundation
import Logging
import Synchronization

/// One JSON object per line on standard error, for log shippers.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    private static let output = Mutex(())

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [String: Any] = [:]
        for (key, value) in metadata { fields[key] = Self.json(value) }
        for (key, value) in metadataProvider?.get() ?? [:] { fields[key] = Self.json(value) }
        for (key, value) in event.metadata ?? [:] { fields[key] = Self.json(value) }
        fields["ts"] = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        fields["level"] = event.level.rawValue
        fields["msg"] = event.message.description
        fields["logger"] = label
        guard var line = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0a)
        Self.output.withLock { _ in FileHandle.standardError.write(line) }
    }

    /// Numbers as numbers (a status, a duration), so that log systems compare them as such;
    /// anything else by its description.
    private static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let number as Int): number
        case .stringConvertible(let number as LoggedNumber): NSDecimalNumber(string: number.description)
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(json)
        case .dictionary(let dictionary): dictionary.mapValues(json)
        }
    }
}
