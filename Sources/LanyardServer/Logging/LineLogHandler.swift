import Foundation
import Logging

/// Lanyard's log output: one line per event, in swift-log's `StreamLogHandler` layout
/// (`time level label: key=value … [source] message`, keys sorted), written to standard error.
///
/// `StreamLogHandler` formats its whole metadata again every time a key is set, and every request sets two
/// (Hummingbird's request id and ours) whether or not it logs anything: two sorts and two joined strings per
/// request, ~2.5% of a sign-in's CPU. This handler keeps the metadata as it is and formats it only for a line
/// it writes.
public struct LineLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable (String) -> Void

    /// - Parameter write: receives each line, newline included; standard error unless told otherwise.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider,
                write: @escaping @Sendable (String) -> Void = LineLogHandler.writeToStandardError) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, provided in provided } }
        if let explicit = event.metadata { merged.merge(explicit) { _, explicit in explicit } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        write(Self.line(time: Self.timestamp(), level: event.level, label: label, metadata: merged,
                        source: event.source, message: event.message.description))
    }

    /// One line: `time level label: k=v … [source] message\n`, metadata sorted by key, left out when empty.
    static func line(time: String, level: Logger.Level, label: String, metadata: Logger.Metadata,
                     source: String, message: String) -> String {
        var line = "\(time) \(level)\(label.isEmpty ? "" : " ")\(label):"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(value)"
        }
        return line + " [\(source)] \(message)\n"
    }

    /// Local time to the second with its offset, as `StreamLogHandler` writes it.
    static func timestamp() -> String {
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// One `write` per line, so lines from concurrent requests never interleave.
    @Sendable public static func writeToStandardError(_ line: String) {
        var line = line
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
