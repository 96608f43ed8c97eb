import Foundation

/// What Apple's notifications leave behind: the ids of those already handled (so a replay changes nothing), and
/// per Apple identity when consent was revoked and whether email forwarding to its relay address is on.
public struct AppleNotificationStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// Records notification `jti`; false when it was handled before.
    public func recordOnce(jti: String, type: String, at date: Date) async throws -> Bool {
        !(try await connection.query("""
            INSERT INTO apple_notifications (jti, type, received_at) VALUES ($1, $2, $3) ON CONFLICT (jti) DO NOTHING RETURNING jti
            """, [.text(jti), .text(type), .date(date)]).isEmpty)
    }

    public func setConsentRevoked(identityID: String, at date: Date) async throws {
        try await connection.query("""
            INSERT INTO apple_identity_state (identity_id, consent_revoked_at) VALUES ($1, $2)
            ON CONFLICT (identity_id) DO UPDATE SET consent_revoked_at = excluded.consent_revoked_at
            """, [.text(identityID), .date(date)])
    }

    public func setEmailForwarding(identityID: String, enabled: Bool) async throws {
        try await connection.query("""
            INSERT INTO apple_identity_state (identity_id, email_forwarding) VALUES ($1, $2)
            ON CONFLICT (identity_id) DO UPDATE SET email_forwarding = excluded.email_forwarding
            """, [.text(identityID), .text(enabled ? "enabled" : "disabled")])
    }

    /// When consent was last revoked, and the email forwarding state, if Apple said.
    public func state(identityID: String) async throws -> (consentRevokedAt: Date?, emailForwarding: String?) {
        guard let row = try await connection.first("SELECT * FROM apple_identity_state WHERE identity_id = $1",
                                                   [.text(identityID)]) else { return (nil, nil) }
        return (try row.optionalDate("consent_revoked_at"), try row.optionalString("email_forwarding"))
    }
}
