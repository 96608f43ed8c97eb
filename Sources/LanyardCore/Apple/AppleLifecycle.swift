import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport

/// Apple's account lifecycle (reference section 10): an authorization code sent with a sign-in, link or
/// re-authentication is redeemed for Apple's refresh token, kept sealed with the master key; deleting the account
/// or unlinking the Apple identity owes Apple the token's revocation (`AppleTokenStore.scheduleRevocation`, in that
/// transaction), which `revokeDue` sends until Apple answers 200. Nothing here ever fails or delays a sign-in.
public struct AppleLifecycle: Sendable {
    let dependencies: CoreDependencies
    let services: AppleServices
    public let clientSecret: AppleClientSecret
    let masterKey: MasterKey

    public init(_ dependencies: CoreDependencies, services: AppleServices, clientSecret: AppleClientSecret,
                masterKey: MasterKey) {
        self.dependencies = dependencies
        self.services = services
        self.clientSecret = clientSecret
        self.masterKey = masterKey
    }

    /// Redeems `code` for the Apple identity `idToken` names and keeps its refresh token.
    /// - Returns: whether a token is now stored; a failure is the caller's to log and count, never to answer.
    @discardableResult
    public func redeem(code: String, idToken: String, nonce: String?) async -> Bool {
        do {
            let identity = try await dependencies.providerTokens.verify(idToken, provider: .apple, nonce: nonce)
            let now = dependencies.clock.now()
            let refreshToken = try await services.redeem(
                code: code, clientID: identity.audience, clientSecret: try clientSecret.make(clientID: identity.audience, at: now))
            let sealed = try masterKey.seal(Array(refreshToken.utf8))
            return try await dependencies.database.transaction { connection in
                guard let stored = try await IdentityStore(connection).find(provider: Provider.apple.rawValue,
                                                                           providerUserID: identity.subject) else { return false }
                try await AppleTokenStore(connection).save(identityID: stored.id, clientID: identity.audience,
                                                           sealedToken: sealed, at: now)
                return true
            }
        } catch {
            return false
        }
    }

    /// The wait before trying a revocation again after `attempts` failures: 5 s doubling, at most an hour.
    public static func retryDelay(afterAttempts attempts: Int) -> TimeInterval {
        min(3600, 5 * pow(2, Double(max(0, attempts - 1))))
    }

    /// Sends the revocations that are due (leased, so with several instances each is sent by one).
    /// - Returns: how many Apple accepted.
    @discardableResult
    public func revokeDue(limit: Int = 16) async throws -> Int {
        let now = dependencies.clock.now()
        let due = try await dependencies.database.transaction { connection in
            try await AppleTokenStore(connection).claimDue(now: now, leaseEnd: now.addingTimeInterval(60), limit: limit)
        }
        var revoked = 0
        for revocation in due {
            var failure: String?
            do {
                let token = String(decoding: try masterKey.open(revocation.sealedToken), as: UTF8.self)
                try await services.revoke(refreshToken: token, clientID: revocation.clientID,
                                          clientSecret: try clientSecret.make(clientID: revocation.clientID, at: now))
                revoked += 1
            } catch {
                failure = String(describing: error)
            }
            let (attempts, outcome) = (revocation.attempts + 1, failure)
            try await dependencies.database.transaction { connection in
                try await AppleTokenStore(connection).record(
                    id: revocation.id, revoked: outcome == nil, error: outcome,
                    retryAt: now.addingTimeInterval(Self.retryDelay(afterAttempts: attempts)), at: now)
            }
        }
        return revoked
    }
}
