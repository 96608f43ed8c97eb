import Foundation
import Logging
import PostgresNIO

/// Wake-ups between instances that share a database (PostgreSQL's `LISTEN`/`NOTIFY`): only a hint that something
/// changed, never the change itself. A notification can be lost (an instance's listening connection drops); the
/// listener says when it (re)starts listening, so its owner reads everything again then.
public protocol DatabaseNotifications: Sendable {
    /// Sends `payloads` (without line breaks) on `channel`, each one notification, in one round trip. Outside any
    /// transaction: call it after the commit the notifications are about.
    func notify(channel: String, payloads: [String]) async throws

    /// Listens on `channel` until the task is cancelled, on a connection of its own, reconnecting when it drops.
    /// `listening` is called each time listening (re)starts; `received` with each payload.
    func listen(channel: String, listening: @escaping @Sendable () -> Void,
                received: @escaping @Sendable (String) -> Void) async
}

extension PostgresDatabase: DatabaseNotifications {
    public func notify(channel: String, payloads: [String]) async throws {
        guard !payloads.isEmpty else { return }
        // One fixed statement however many: pg_notify for each line of one text (payloads hold no line breaks).
        _ = try await autocommit { connection in
            try await connection.query("SELECT pg_notify($1, p) FROM unnest(string_to_array($2, E'\\n')) AS p",
                                       [.text(channel), .text(payloads.joined(separator: "\n"))])
        }
    }

    public func listen(channel: String, listening: @escaping @Sendable () -> Void,
                       received: @escaping @Sendable (String) -> Void) async {
        while !Task.isCancelled {
            do {
                let connection = try await dedicatedConnection()
                do {
                    try await connection.listen(on: channel) { notifications in
                        listening()
                        for try await notification in notifications { received(notification.payload) }
                    }
                } catch {
                    if !Task.isCancelled {
                        notificationLogger.warning("change notifications interrupted", metadata: [
                            "reason": "\(PostgresPool.reason(error))"])
                    }
                }
                try? await connection.close()
            } catch {
                // The database is unreachable: the pool reports it; try again shortly.
            }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }
}
