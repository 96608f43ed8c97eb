/// The change stream's events (`GET /v1/changes/stream`, reference section 13), by the name each has on the wire.
/// A `change` carries a `ChangeRecord`; the others carry the types below.
///
/// ```swift
/// if StreamEventName(rawValue: event.name) == .ready { isLive = true }
/// ```
public enum StreamEventName: String, Sendable, CaseIterable {
    case change
    /// Caught up: `StreamReady`.
    case ready
    /// The access token expires soon: `StreamTokenExpiring`.
    case tokenExpiring = "token_expiring"
    /// The account left a group, or was removed: `StreamRemoval`.
    case groupRemoved = "group_removed"
    /// A member stopped sharing a collection with one of the account's groups: `StreamRemoval`.
    case shareRemoved = "share_removed"
    /// The account may no longer read a group's collection: `StreamRemoval`.
    case accessRemoved = "access_removed"
    /// The server closes the stream: `StreamEnded`.
    case end
}

/// `event: ready`: everything up to `cursor` was sent; changes now come as they commit.
///
/// ```swift
/// let ready = try WireCoding.decoder().decode(StreamReady.self, from: Data(event.data.utf8))
/// ```
public struct StreamReady: Sendable, Codable, Equatable {
    /// Where the stream stands: resuming from it repeats and loses nothing.
    public var cursor: String

    public init(cursor: String) {
        self.cursor = cursor
    }
}

/// `event: token_expiring`: the bearer expires in `expiresIn` seconds; refresh now, and the stream ends with
/// `token_expired` when it does.
///
/// ```swift
/// let expiring = try WireCoding.decoder().decode(StreamTokenExpiring.self, from: Data(event.data.utf8))
/// ```
public struct StreamTokenExpiring: Sendable, Codable, Equatable {
    public var expiresIn: Int

    public init(expiresIn: Int) {
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey { case expiresIn = "expires_in" }
}

/// `group_removed`, `share_removed`, `access_removed`: records of the group (or of its shared or policy-limited
/// collection) are no longer readable; nothing of them follows.
///
/// ```swift
/// let removal = try WireCoding.decoder().decode(StreamRemoval.self, from: Data(event.data.utf8))
/// ```
public struct StreamRemoval: Sendable, Codable, Equatable {
    public var groupID: String
    /// The collection, for `share_removed` and `access_removed`.
    public var collection: String?
    /// The member who stopped sharing, for `share_removed`.
    public var sharedBy: String?

    public init(groupID: String, collection: String? = nil, sharedBy: String? = nil) {
        (self.groupID, self.collection, self.sharedBy) = (groupID, collection, sharedBy)
    }

    enum CodingKeys: String, CodingKey { case collection, groupID = "group_id", sharedBy = "shared_by" }
}

/// Why the server ends a stream (`event: end`), and what a client does next.
///
/// ```swift
/// if ended.reason == .tokenExpired { try await refresh() }
/// ```
public enum StreamEndReason: String, Sendable, Codable, CaseIterable {
    /// The bearer expired: refresh and reconnect.
    case tokenExpired = "token_expired"
    /// The session ended (sign-out, revocation, refresh reuse).
    case signedOut = "signed_out"
    case accountDisabled = "account_disabled"
    case accountDeleted = "account_deleted"
    /// The account was merged into another (`StreamEnded.into`).
    case accountMerged = "account_merged"
    /// The account opened more streams than allowed: this, the oldest, ends.
    case replaced
    /// The instance is stopping: reconnect (another answers behind a load balancer).
    case shutdown
    /// The cursor was not issued by this feed: start again from the beginning.
    case resyncRequired = "resync_required"
}

/// `event: end`: the server closes the stream after it.
///
/// ```swift
/// let ended = try WireCoding.decoder().decode(StreamEnded.self, from: Data(event.data.utf8))
/// ```
public struct StreamEnded: Sendable, Codable, Equatable {
    public var reason: StreamEndReason
    /// The survivor, for `account_merged`.
    public var into: User.ID?

    public init(reason: StreamEndReason, into: User.ID? = nil) {
        (self.reason, self.into) = (reason, into)
    }
}
