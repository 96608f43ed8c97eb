import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport

/// Apple's server-to-server notifications (reference section 10), verified like an ID token and applied once:
/// `consent-revoked` ends the Apple sessions and marks the identity revoked (until the person signs in with Apple
/// again, which Apple only allows after new consent); `account-delete(d)` unlinks the identity, or deletes the
/// account when it was the only way in; `email-disabled` / `email-enabled` record the relay's forwarding. Each is
/// audited, and so becomes a webhook.
public struct AppleNotifications: Sendable {
    /// What the `events` claim says.
    public struct Event: Sendable, Equatable {
        public var type: String
        public var subject: String
        public var eventTime: Date?
    }

    public enum Outcome: String, Sendable {
        case applied, replayed
        /// No Lanyard account has that Apple identity (any more): nothing to do.
        case unknownIdentity = "unknown_identity"
    }

    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// Apple's `events` claim is a JSON *string* holding `type`, `sub` and `event_time` (milliseconds).
    public static func event(from claims: [String: JSONValue]) throws -> Event {
        guard let text = claims["events"]?.stringValue, case .object(let event)? = try? JSONParser.parse(Array(text.utf8)),
              let type = event["type"]?.stringValue, let subject = event["sub"]?.stringValue, !subject.isEmpty else {
            throw LanyardError.invalidRequest(field: "payload", "The notification's events claim is not Apple's")
        }
        return Event(type: type, subject: subject,
                     eventTime: event["event_time"]?.numberValue.map { Date(timeIntervalSince1970: $0 / 1000) })
    }

    public func handle(payload: String) async throws -> Outcome {
        let claims = try await dependencies.providerTokens.verifySigned(payload, provider: .apple)
        let event = try Self.event(from: claims)
        let jti = claims["jti"]?.stringValue ?? Hashing.sha256Hex(payload)
        let dependencies = self.dependencies
        let (outcome, userID) = try await dependencies.database.transactionRetryingConflicts { connection in
            let now = dependencies.clock.now()
            guard try await AppleNotificationStore(connection).recordOnce(jti: jti, type: event.type, at: now) else {
                return (Outcome.replayed, nil as String?)
            }
            guard let identity = try await IdentityStore(connection).find(provider: Provider.apple.rawValue,
                                                                         providerUserID: event.subject) else {
                return (Outcome.unknownIdentity, nil)
            }
            return (try await Self.apply(event, to: identity, on: connection,
                                         audit: dependencies.audit(connection, at: now, clientIP: nil), at: now),
                    identity.userID)
        }
        if let userID { dependencies.signals.accessChanged([userID]) }
        return outcome
    }

    /// What each of Apple's event types does to the account that holds the Apple identity.
    private static func apply(_ event: Event, to identity: IdentityRecord, on connection: any DatabaseConnection,
                              audit: AuditLog, at now: Date) async throws -> Outcome {
        let details = ["provider": Provider.apple.rawValue, "actor": "apple", "notification": event.type]
        switch event.type {
        case "consent-revoked":
            try await AppleNotificationStore(connection).setConsentRevoked(identityID: identity.id, at: now)
            try await SessionStore(connection).revokeAll(userID: identity.userID, method: Provider.apple.rawValue,
                                                        reason: "apple_consent_revoked", at: now)
            try await audit.write(.identityRevoked, userID: identity.userID, details: details)
        case "account-delete", "account-deleted":
            let users = UserStore(connection)
            guard let (_, owned) = try await users.findWithIdentitiesForUpdate(id: identity.userID) else { return .unknownIdentity }
            // A merge moved the identity to another account between the read above and this lock: read it again.
            guard owned.contains(where: { $0.id == identity.id }) else { throw StoreError.serializationFailure }
            if owned.count > 1 {
                try await IdentityStore(connection).delete(userID: identity.userID, provider: Provider.apple.rawValue)
                try await audit.write(.identityUnlinked, userID: identity.userID, details: details)
            } else {
                // Apple's own account is gone, and with it the only way into this one.
                try await users.delete(id: identity.userID)
                try await audit.write(.userDeleted, userID: identity.userID, details: details)
            }
        case "email-disabled", "email-enabled":
            try await AppleNotificationStore(connection).setEmailForwarding(identityID: identity.id,
                                                                            enabled: event.type == "email-enabled")
            try await audit.write(.userUpdated, userID: identity.userID,
                                  details: details.merging(["field": "apple_email_forwarding"]) { $1 })
        default:
            break
        }
        return .applied
    }
}
