import LanyardStore
import Logging
import Synchronization

/// Tells the other instances on the same PostgreSQL which accounts changed: `NOTIFY lanyard_changes` after the
/// commit, never inside the transaction. Signals that arrive while a notification is being sent are gathered and
/// go out together in the next (one statement for any number). Each instance's `run()` also listens, and wakes its
/// hub's readers of the accounts named; when it (re)starts listening it wakes every reader, who read again what
/// they may have missed. Notifications are only wake-ups: readers also read again every 30 s.
final class ChangeNotifier: Sendable {
    static let channel = "lanyard_changes"
    /// Account ids per notification: PostgreSQL's payloads are at most 8,000 bytes.
    static let idsPerNotification = 150

    enum Kind: String, Sendable {
        case records = "r"
        case access = "a"
        /// Email flows whose link was confirmed (their ids, not accounts').
        case emailFlows = "e"
    }

    private let database: any DatabaseNotifications
    private let hub: ChangeHub
    private let flows: EmailFlowWaits
    /// Names this instance's notifications, which it ignores when they come back: it woke its readers already,
    /// with the changes themselves.
    let instance = String(UInt64.random(in: 0...UInt64.max), radix: 36)
    private let pending = Mutex<(records: Set<String>, access: Set<String>, flows: Set<String>)>(([], [], []))
    private let trigger: AsyncStream<Void>
    private let triggerContinuation: AsyncStream<Void>.Continuation

    init(database: any DatabaseNotifications, hub: ChangeHub, flows: EmailFlowWaits) {
        self.database = database
        self.hub = hub
        self.flows = flows
        (trigger, triggerContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func send(_ kind: Kind, _ userIDs: [String]) {
        pending.withLock { pending in
            switch kind {
            case .records: pending.records.formUnion(userIDs)
            case .access: pending.access.formUnion(userIDs)
            case .emailFlows: pending.flows.formUnion(userIDs)
            }
        }
        triggerContinuation.yield()
    }

    /// The payloads of what is pending, taken: `r <instance> <id> <id>…` or `a <instance> <id> <id>…`.
    func takePayloads() -> [String] {
        let (records, access, flows) = pending.withLock { pending in
            defer { pending = ([], [], []) }
            return (pending.records, pending.access, pending.flows)
        }
        return Self.payloads(.records, records.sorted(), from: instance) + Self.payloads(.access, access.sorted(), from: instance)
            + Self.payloads(.emailFlows, flows.sorted(), from: instance)
    }

    static func payloads(_ kind: Kind, _ userIDs: [String], from instance: String) -> [String] {
        stride(from: 0, to: userIDs.count, by: idsPerNotification).map { start in
            ([kind.rawValue, instance] + userIDs[start..<min(start + idsPerNotification, userIDs.count)]).joined(separator: " ")
        }
    }

    /// What a payload asks: wake the accounts' readers for records or for access; and which instance sent it.
    static func parse(_ payload: String) -> (Kind, instance: String, [String])? {
        let words = payload.split(separator: " ").map(String.init)
        guard words.count >= 2, let kind = Kind(rawValue: words[0]) else { return nil }
        return (kind, words[1], Array(words.dropFirst(2)))
    }

    /// Sends what is pending whenever there is some.
    func sendPending(logger: Logger) async {
        for await _ in trigger {
            let payloads = takePayloads()
            do {
                try await database.notify(channel: Self.channel, payloads: payloads)
            } catch {
                // Readers on other instances still read again within 30 s: delayed, not lost.
                logger.warning("change notification not sent", metadata: ["error": "\(String(describing: type(of: error)))"])
            }
        }
    }

    func listen() async {
        await database.listen(channel: Self.channel, listening: { [hub] in
            hub.wake(nil, records: true, access: true)
        }, received: { [hub, flows, instance] payload in
            guard let (kind, sender, ids) = Self.parse(payload), sender != instance else { return }
            if kind == .emailFlows {
                flows.wake(ids)
            } else {
                hub.wake(ids, records: kind == .records, access: kind == .access)
            }
        })
    }

    func finish() {
        triggerContinuation.finish()
    }
}
