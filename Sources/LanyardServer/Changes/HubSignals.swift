import LanyardCore

/// The server's `AccountSignals`: wakes this instance's readers of the accounts at once, and, with several
/// instances (PostgreSQL), has `ChangeNotifier` tell the others.
struct HubSignals: AccountSignals {
    let hub: ChangeHub
    let notifier: ChangeNotifier?

    func recordsChanged(_ userIDs: [String], written: [FeedChange]) {
        hub.wake(userIDs, records: true, access: false, written: written)
        notifier?.send(.records, userIDs)
    }

    func accessChanged(_ userIDs: [String]) {
        hub.wake(userIDs, records: false, access: true)
        notifier?.send(.access, userIDs)
    }
}
