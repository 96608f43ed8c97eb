import Foundation
import LanyardStore
import LanyardSupport

/// Writes account events for the app's backend (reference section 7) into the outbox, inside the transaction of
/// the change that causes them: an event exists exactly when its change committed. The audit log calls it for
/// the audit events that are also webhook events.
public struct WebhookOutbox: Sendable {
    let connection: any DatabaseConnection
    let random: any RandomSource

    init(_ connection: any DatabaseConnection, random: any RandomSource) {
        self.connection = connection
        self.random = random
    }

    /// The webhook an audit event is, if any.
    static func type(of event: AuditEvent) -> String? {
        switch event {
        case .userCreated: "user.created"
        case .userUpdated, .userDisabled, .userEnabled: "user.updated"
        case .userDeleted, .anonymousPurged: "user.deleted"
        case .identityLinked: "identity.linked"
        case .identityUnlinked: "identity.unlinked"
        case .identityRevoked: "identity.revoked"
        case .accountMerged: "account.merged"
        case .accountUnmerged: "account.unmerged"
        case .refreshReuseDetected: "session.reuse_detected"
        case .emailFailed, .recoverySent, .passkeyCloneSuspected, .userMigrated: event.rawValue
        case .groupCreated, .groupUpdated, .groupDeleted, .groupMemberJoined, .groupMemberRemoved,
             .groupMemberRoleChanged, .groupOwnershipTransferred: event.rawValue
        case .signIn, .mergeRecordReplaced, .signOut, .sessionRevoked, .reauthenticated, .groupInviteCreated,
             .groupInviteRevoked, .groupPolicySet, .groupCollectionShared, .groupCollectionUnshared,
             .groupMemberUpdated, .passkeyRenamed: nil
        }
    }

    func write(_ event: AuditEvent, userID: String?, sessionID: String?, details: [String: String], at date: Date) async throws {
        guard let type = Self.type(of: event) else { return }
        var data: [String: String] = details.filter { $0.key != "discarded_data" }
        if let userID { data["user_id"] = userID }
        if let sessionID, event == .refreshReuseDetected { data["session_id"] = sessionID }
        if event == .userDisabled || event == .userEnabled { data["disabled"] = event == .userDisabled ? "true" : "false" }
        // A backend keyed by the old system's ids finds its user by them (reference section 24).
        if data["legacy_id"] == nil, let userID, let legacy = try await ImportStore(connection).legacyID(userID: userID) {
            (data["legacy_id"], data["legacy_source"]) = (legacy.id, legacy.source)
        }
        let payload = Self.payload(type: type, at: date, data: data)
        // A merge's events (and a revert's) name two accounts: each waits for the earlier events of both, so every
        // receiver sees them in the order they happened for either account.
        let (account, related): (String?, String?) = switch event {
        case .accountMerged: (details["to"] ?? userID, details["from"])
        case .accountUnmerged: (details["from"] ?? userID, details["to"])
        default: (userID, nil)
        }
        try await WebhookStore(connection).enqueue(eventID: "msg_" + random.hexString(byteCount: 16), userID: account,
                                                   relatedUserID: related, type: type, payload: payload, at: date)
    }

    /// `{"type", "timestamp", "data"}`, the body Standard Webhooks receivers expect.
    static func payload(type: String, at date: Date, data: [String: String]) -> String {
        var writer = JSONWriter(capacity: 256)
        writer.object { json in
            json.key("type"); json.string(type)
            json.key("timestamp"); json.date(date)
            json.key("data"); json.object { object in
                for key in data.keys.sorted() {
                    object.key(key)
                    object.string(data[key])
                }
            }
        }
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
