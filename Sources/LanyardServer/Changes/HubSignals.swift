import LanyardCore

/// The server's `AccountSignals`: wakes this instance's readers of the accounts (and the devices waiting for an
/// email flow's link) at once, and, with several instances (PostgreSQL), has `ChangeNotifier` tell the others.
struct HubSignals: AccountSignals {
    let hub: ChangeHub
    let flows: EmailFlowWaits
    let notifier: ChangeNotifier?

    func recordsChanged(_ userIDs: [String], written: [FeedChange]) {
        hub.wake(userIDs, records: true, access: false, written: written)
        notifier?.send(.records, userIDs)
    }

    func accessChanged(_ userIDs: [String]) {
        hub.wake(userIDs, records: false, access: true)
        notifier?.send(.access, userIDs)
    }

    func emailFlowConfirmed(_ flowID: String) {
        flows.wake([flowID])
        notifier?.send(.emailFlows, [flowID])
    }

    func waitForEmailFlow(_ flowID: String, upTo timeout: Duration) async {
        await flows.wait(for: flowID, upTo: timeout)
    }
}
