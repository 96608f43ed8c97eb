/// Told after a commit that something an account's live readers depend on changed, so that its streams and
/// long-polls look again at once instead of at their next periodic read. A signal is only a wake-up: the feed and
/// the session rows are the truth, so a lost signal delays, never loses. Sent after the commit, never inside the
/// transaction (a reader woken early would not see the change yet).
public protocol AccountSignals: Sendable {
    /// Records the accounts can read were written (a data write, a merge moving records in). `written` are the
    /// committed changes themselves when the writer has them (one account's write): a reader on this instance that
    /// finds them next after its cursor sends them without reading the feed; any gap and it reads.
    func recordsChanged(_ userIDs: [String], written: [FeedChange])
    /// A session of the accounts ended, or the accounts themselves were disabled, deleted or merged away.
    func accessChanged(_ userIDs: [String])
    /// An email flow's link was confirmed (after the commit): the device waiting in `complete` may finish.
    func emailFlowConfirmed(_ flowID: String)
    /// Waits until this instance hears that `flowID` was confirmed, or `timeout` passes; the caller reads the flow
    /// again either way (a wake-up is a hint, the database the truth).
    func waitForEmailFlow(_ flowID: String, upTo timeout: Duration) async
}

/// For tools that run the rules without serving streams (the CLI, tests of services).
public struct SilentAccountSignals: AccountSignals {
    public init() {}
    public func recordsChanged(_ userIDs: [String], written: [FeedChange]) {}
    public func accessChanged(_ userIDs: [String]) {}
    public func emailFlowConfirmed(_ flowID: String) {}
    public func waitForEmailFlow(_ flowID: String, upTo timeout: Duration) async {
        try? await Task.sleep(for: timeout)
    }
}
