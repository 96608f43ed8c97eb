import Foundation
import LanyardStore
import LanyardSupport
import LanyardWire

// The admin API's answers are the wire types of `LanyardWire/Admin.swift`, built here from the stored rows.

extension AdminUserSummary {
    init(_ user: UserRecord, identities: [IdentityRecord]) {
        self.init(id: user.id, createdAt: user.createdAt, lastActiveAt: user.lastActiveAt, isAnonymous: user.isAnonymous,
                  disabled: user.disabledAt != nil, displayName: user.displayName,
                  email: identities.lazy.compactMap(\.email).first, providers: identities.map(\.provider),
                  legacyID: user.legacy?.id, legacySource: user.legacy?.source)
    }
}

extension AdminIdentity {
    init(_ identity: IdentityRecord, primary: Bool) {
        self.init(id: identity.id, provider: identity.provider, subject: identity.providerUserID, email: identity.email,
                  emailVerified: identity.emailVerified, isPrivateEmail: identity.isPrivateEmail,
                  linkedAt: identity.linkedAt, lastSignInAt: identity.lastSignInAt, primary: primary)
    }
}

extension AdminSession {
    init(_ session: SessionRecord) {
        self.init(id: session.id, method: session.amr, clientIP: session.clientIP, userAgent: session.userAgent,
                  createdAt: session.createdAt, lastRefreshedAt: session.refreshedAt, expiresAt: session.expiresAt)
    }
}

extension AdminAuditEvent {
    init(id: Int64, _ entry: AuditEntry) {
        self.init(id: id, at: entry.at, type: entry.event, userID: entry.userID, sessionID: entry.sessionID,
                  clientIP: entry.clientIP, details: entry.details.map(JSONText.init))
    }
}
