import Foundation
import LanyardStore
import LanyardSupport

/// Writes audit rows inside the caller's transaction, so a change and its record commit together.
public enum AuditEvent: String, Sendable, CaseIterable {
    case signIn = "sign_in"
    case userCreated = "user.created"
    case userDeleted = "user.deleted"
    case identityLinked = "identity.linked"
    case identityUnlinked = "identity.unlinked"
    case accountMerged = "account.merged"
    case mergeRecordReplaced = "merge.record_replaced"
    case refreshReuseDetected = "session.reuse_detected"
    case signOut = "sign_out"
    case sessionRevoked = "session.revoked"
    case reauthenticated = "reauthenticated"
    case anonymousPurged = "user.anonymous_purged"
    case userUpdated = "user.updated"
    case userDisabled = "user.disabled"
    case userEnabled = "user.enabled"
    /// Apple said the person revoked their consent (a server-to-server notification).
    case identityRevoked = "identity.revoked"
    /// An operator reverted a full merge: the absorbed account is back (reference section 15).
    case accountUnmerged = "account.unmerged"
    // Groups (reference section 14); each names the group and its actor.
    case groupCreated = "group.created"
    case groupUpdated = "group.updated"
    case groupDeleted = "group.deleted"
    case groupMemberJoined = "group.member_joined"
    case groupMemberRemoved = "group.member_removed"
    case groupMemberRoleChanged = "group.member_role_changed"
    case groupOwnershipTransferred = "group.ownership_transferred"
    // Audited, not webhooks: who invited, revoked, set a policy, shared or changed what they share.
    case groupInviteCreated = "group.invite_created"
    case groupInviteRevoked = "group.invite_revoked"
    case groupPolicySet = "group.policy_set"
    case groupCollectionShared = "group.collection_shared"
    case groupCollectionUnshared = "group.collection_unshared"
    case groupMemberUpdated = "group.member_updated"
    // Email (reference section 18).
    /// A mail could not be delivered after its last retry (also a webhook).
    case emailFailed = "email.failed"
    /// An operator sent a recovery flow to the account's email identity (also a webhook).
    case recoverySent = "user.recovery_sent"
    // Passkeys (reference section 19).
    /// A passkey's name changed (audit only).
    case passkeyRenamed = "passkey.renamed"
    /// A sign-in's signature counter did not increase: the passkey may have been cloned (also a webhook).
    case passkeyCloneSuspected = "passkey.clone_suspected"
    // Switching day (reference section 24).
    /// A person crossed from the old system through the bridge (also a webhook).
    case userMigrated = "user.migrated"
}

extension AuditEvent {
    /// The webhook types Lanyard sends (reference section 7): the audit events that are also webhooks.
    public static var webhookTypes: Set<String> { Set(allCases.compactMap(WebhookOutbox.type(of:))) }
}

public struct AuditLog: Sendable {
    let connection: any DatabaseConnection
    let at: Date
    let clientIP: String?
    /// Where the events that are also webhooks go, in the same transaction; nil without webhooks configured.
    let outbox: WebhookOutbox?

    init(_ connection: any DatabaseConnection, at: Date, clientIP: String?, outbox: WebhookOutbox?) {
        self.connection = connection
        self.at = at
        self.clientIP = clientIP
        self.outbox = outbox
    }

    public func write(_ event: AuditEvent, userID: String?, sessionID: String? = nil, details: [String: String] = [:]) async throws {
        var json: String?
        if !details.isEmpty {
            var writer = JSONWriter(capacity: 128)
            writer.object { object in
                for key in details.keys.sorted() {
                    object.key(key)
                    object.string(details[key])
                }
            }
            json = String(decoding: writer.bytes, as: UTF8.self)
        }
        try await AuditStore(connection).append(AuditEntry(
            at: at, event: event.rawValue, userID: userID, sessionID: sessionID, clientIP: clientIP, details: json))
        try await outbox?.write(event, userID: userID, sessionID: sessionID, details: details, at: at)
    }
}
