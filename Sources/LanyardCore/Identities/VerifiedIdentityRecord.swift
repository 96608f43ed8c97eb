import Foundation
import LanyardProviders
import LanyardStore

extension IdentityRecord {
    /// The row for a provider identity that was just verified, as sign-in and linking both attach it.
    init(_ verified: VerifiedIdentity, id: String, userID: String, linkedAt: Date, lastSignInAt: Date?) {
        self.init(id: id, userID: userID, provider: verified.provider.rawValue, providerUserID: verified.subject,
                  email: verified.email, emailVerified: verified.emailVerified, isPrivateEmail: verified.isPrivateEmail,
                  linkedAt: linkedAt, lastSignInAt: lastSignInAt)
    }
}
