import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One Server-Sent Event as the stream sent it.
struct ServerSentEvent: Sendable, Equatable {
    var name: String
    var id: String?
    var data: String
}

/// Splits a text/event-stream into events (the WHATWG rules the SDK needs: `event`, `id`, `data`, comments,
/// `\n` or `\r\n` line ends), fed with bytes as they arrive.
struct ServerSentEventParser: Sendable {
    /// The longest line kept while its end has not arrived (a change is at most a 256 KiB record, escaped).
    static let maximumLineBytes = 4 << 20

    private var pending: [UInt8] = []
    private var event = ServerSentEvent(name: "message", id: nil, data: "")
    private var hasData = false

    /// Whether a line grew past `maximumLineBytes` without ending: the stream is not one this parser reads.
    var isOverlong: Bool { pending.count > Self.maximumLineBytes }

    /// The events completed by `bytes`.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        pending.append(contentsOf: bytes)
        var events: [ServerSentEvent] = []
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            var line = pending[..<newline]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            let text = String(decoding: line, as: UTF8.self)
            pending.removeSubrange(...newline)
            if text.isEmpty {
                if hasData || event.name != "message" { events.append(event) }
                event = ServerSentEvent(name: "message", id: nil, data: "")
                hasData = false
                continue
            }
            if text.hasPrefix(":") { continue }
            let (field, value) = Self.split(text)
            switch field {
            case "event": event.name = value
            case "id": event.id = value
            case "data":
                event.data += (hasData ? "\n" : "") + value
                hasData = true
            default: break
            }
        }
        return events
    }

    private static func split(_ line: String) -> (String, String) {
        guard let colon = line.firstIndex(of: ":") else { return (line, "") }
        var value = line[line.index(after: colon)...]
        if value.first == " " { value = value.dropFirst() }
        return (String(line[..<colon]), String(value))
    }
}

/// One connection to `GET /v1/changes/stream`, its events read as they arrive. Through a `URLSession` delegate,
/// which works on Apple platforms and on Linux alike (corelibs Foundation has no `URLSession.bytes`).
///
/// Bounded: at most `maximumWaitingEvents` events wait for a reader that is slower than the stream, and a line at
/// most `ServerSentEventParser.maximumLineBytes`. Past either the connection ends with a network error, and the
/// reader reconnects from the last change it delivered: nothing is lost, nothing grows without end.
final class EventSourceConnection: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    static let maximumWaitingEvents = 1000

    /// What the connection yields: its events, then the end (`nil` error: the server closed it).
    let events: AsyncThrowingStream<ServerSentEvent, any Error>
    private let continuation: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation
    private let lock = NSLock()
    private var parser = ServerSentEventParser()
    private var status = 0
    private var errorBody = Data()
    private var headers: [AnyHashable: Any] = [:]
    private var session: URLSession?
    private var task: URLSessionDataTask?

    init(request: URLRequest) {
        (events, continuation) = AsyncThrowingStream.makeStream(
            of: ServerSentEvent.self, bufferingPolicy: .bufferingOldest(Self.maximumWaitingEvents))
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        // A stream is idle between heartbeats (15 s by default): wait longer than that for bytes.
        configuration.timeoutIntervalForRequest = 120
        configuration.timeoutIntervalForResource = .infinity
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        let task = session.dataTask(with: request)
        lock.withLock { (self.session, self.task) = (session, task) }
        continuation.onTermination = { [weak self] _ in self?.cancel() }
        task.resume()
    }

    func cancel() {
        let (session, task) = lock.withLock { (self.session, self.task) }
        task?.cancel()
        session?.invalidateAndCancel()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        lock.withLock {
            status = http?.statusCode ?? 0
            headers = http?.allHeaderFields ?? [:]
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let (events, overlong): ([ServerSentEvent], Bool) = lock.withLock {
            guard status == 200 else {
                if errorBody.count < 64 * 1024 { errorBody.append(data) }
                return ([], false)
            }
            let events = parser.feed(data)
            return (events, parser.isOverlong)
        }
        for event in events {
            if case .dropped = continuation.yield(event) { return overflow() }
        }
        if overlong { overflow() }
    }

    /// The reader fell too far behind, or the stream sent a line without end: this connection ends, and the reader
    /// resumes on a new one from the last change it delivered.
    private func overflow() {
        continuation.finish(throwing: LanyardError.network(URLError(.dataLengthExceedsMaximum)))
        cancel()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (status, body, headers) = lock.withLock { (self.status, errorBody, self.headers) }
        if let error {
            continuation.finish(throwing: LanyardError.network((error as? URLError) ?? URLError(.networkConnectionLost)))
        } else if let refused = LanyardError.decode(status: status, body: body, headers: headers) {
            continuation.finish(throwing: refused)
        } else {
            continuation.finish()
        }
        session.finishTasksAndInvalidate()
    }
}
