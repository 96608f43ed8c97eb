import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// A Server-Sent Events client, as a browser's `EventSource` reads a stream: events split on blank lines, `event`,
/// `id` and `data` fields, comments kept apart. Reads in a task of its own; `next(within:)` hands events over in
/// order (polled: a test waits at most a few milliseconds more). `close()` drops the connection (a device losing its
/// network).
final class EventStreamClient: Sendable {
    struct Event: Sendable, Equatable {
        var name: String
        var id: String?
        var data: String

        /// `data` as a JSON object.
        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:]
        }
    }

    /// The answer's status and headers, once they arrived.
    let status: Int
    let headers: HTTPHeaders
    /// Events read and not handed over yet, whether the stream ended, and the comments seen.
    private final class Inbox: Sendable {
        let received = Mutex<(events: [Event], finished: Bool)>(([], false))
        let comments = Mutex<[String]>([])
    }

    private let inbox = Inbox()
    private let reader: Mutex<Task<Void, Never>?> = Mutex(nil)
    /// The body of a non-stream answer (a 401's JSON).
    let errorBody: String?

    /// Opens `GET url` with the bearer and headers; returns once the answer's head arrived.
    init(_ url: String, bearer: String?, headers: [String: String] = [:]) async throws {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "text/event-stream")
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .hours(1))
        status = Int(response.status.code)
        self.headers = response.headers
        guard response.headers.first(name: "Content-Type")?.hasPrefix("text/event-stream") == true else {
            let body = try await response.body.collect(upTo: 1 << 20)
            errorBody = String(buffer: body)
            inbox.received.withLock { $0.finished = true }
            return
        }
        errorBody = nil
        let inbox = self.inbox
        reader.withLock { $0 = Task {
            var pending = ""
            var event = Event(name: "message", id: nil, data: "")
            var hasData = false
            do {
                for try await buffer in response.body {
                    pending += String(buffer: buffer)
                    while let newline = pending.firstIndex(of: "\n") {
                        let line = String(pending[..<newline])
                        pending = String(pending[pending.index(after: newline)...])
                        if line.isEmpty {
                            if hasData || event.name != "message" { inbox.received.withLock { [event] in $0.events.append(event) } }
                            event = Event(name: "message", id: nil, data: "")
                            hasData = false
                        } else if line.hasPrefix(":") {
                            inbox.comments.withLock { $0.append(String(line.dropFirst()).trimmingCharacters(in: .whitespaces)) }
                        } else {
                            let (field, value) = Self.field(line)
                            switch field {
                            case "event": event.name = value
                            case "id": event.id = value
                            case "data": event.data += (hasData ? "\n" : "") + value; hasData = true
                            default: break
                            }
                        }
                    }
                }
            } catch {}
            inbox.received.withLock { $0.finished = true }
        } }
    }

    private static func field(_ line: String) -> (String, String) {
        guard let colon = line.firstIndex(of: ":") else { return (line, "") }
        var value = line[line.index(after: colon)...]
        if value.first == " " { value = value.dropFirst() }
        return (String(line[..<colon]), String(value))
    }

    struct Timeout: Error, CustomStringConvertible {
        let seconds: Double
        var description: String { "no event within \(seconds) s" }
    }

    /// The next event, or `nil` when the server closed the stream; throws `Timeout` after `seconds`.
    func next(within seconds: Double = 30) async throws -> Event? {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while true {
            let (event, finished) = inbox.received.withLock { state -> (Event?, Bool) in
                if state.events.isEmpty { return (nil, state.finished) }
                return (state.events.removeFirst(), false)
            }
            if let event { return event }
            if finished { return nil }
            guard ContinuousClock.now < deadline else { throw Timeout(seconds: seconds) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Events until one named `name` (included), failing on a stream that ends first.
    func events(until name: String, within seconds: Double = 30) async throws -> [Event] {
        var seen: [Event] = []
        while true {
            guard let event = try await next(within: seconds) else {
                throw Timeout(seconds: seconds)
            }
            seen.append(event)
            if event.name == name { return seen }
        }
    }

    var receivedComments: [String] { inbox.comments.withLock { $0 } }

    func close() {
        reader.withLock { $0?.cancel() }
    }
}
