import Foundation
import LanyardStore
import LanyardSupport
import struct LanyardWire.User

/// The account and session a valid bearer token speaks for.
public struct Caller: Sendable {
    public var userID: String
    public var sessionID: String
    public var isAnonymous: Bool
    public var authTime: Date
    /// Set when this (anonymous) account was merged into another: its session ended with the merge.
    public var mergedInto: String?
    /// The account with its identities, when the store read them with the session (it does where they cost
    /// nothing more); `nil` otherwise. As current as a read at the start of the request can be.
    public var account: SessionWithAccount?
    /// When the presented access token expires (a stream ends then: reference section 13).
    public var tokenExpiresAt = Date.distantFuture
}

/// Turns a bearer token into a `Caller`: signature and expiry, then the session in the database, so a revoked
/// session's tokens stop working at once rather than at expiry.
public struct Authenticator: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    public func authenticate(bearer token: String) async throws -> Caller {
        let caller = try await authenticateAllowingMerged(bearer: token)
        guard caller.mergedInto == nil else { throw try await endedByMerge(caller) }
        return caller
    }

    /// What a token of a merged account gets: `ACCOUNT_MERGED` with `merged_into` after a full merge (reference
    /// section 15), the ended session otherwise (a guest's, whose device holds the account's session now).
    public func endedByMerge(_ caller: Caller) async throws -> LanyardError {
        guard let into = caller.mergedInto else { return .sessionEnded }
        let kind: String? = if let account = caller.account {
            account.user.mergeKind
        } else {
            try await dependencies.database.read { try await UserStore($0).find(id: caller.userID) }?.mergeKind
        }
        return kind == "full" ? .accountMerged(into: into) : .sessionEnded
    }

    /// Like `authenticate`, but also accepts the ended session of an anonymous account that was merged, so a
    /// retried sign-in after a lost response can land in the same account (reference section 6).
    public func authenticateAllowingMerged(bearer token: String) async throws -> Caller {
        let claims = try await dependencies.accessTokens.verify(token)
        guard let found = try await dependencies.sessionAccounts.findWithOwner(sessionID: claims.sid) else {
            throw LanyardError.sessionEnded
        }
        return try await explainingDisabled {
            try caller(claims: claims, session: found.session, ownerIsAnonymous: found.ownerIsAnonymous,
                       ownerMergedInto: found.ownerMergedInto, account: found.account)
        }
    }

    /// `authenticate` and the caller's account, read together in one query (`GET /v1/users/me` is the most
    /// frequent authenticated request).
    public func authenticateReadingAccount(bearer token: String) async throws -> (Caller, User) {
        let claims = try await dependencies.accessTokens.verify(token)
        guard let found = try await dependencies.sessionAccounts.find(sessionID: claims.sid) else {
            throw LanyardError.sessionEnded
        }
        let caller = try await explainingDisabled {
            try self.caller(claims: claims, session: found.session, ownerIsAnonymous: found.user.isAnonymous,
                            ownerMergedInto: found.user.mergedInto, account: found)
        }
        guard caller.mergedInto == nil else { throw try await endedByMerge(caller) }
        return (caller, User(user: found.user, identities: found.identities))
    }

    /// The caller a verified token speaks for, given its session and the session's account as stored.
    private func caller(claims: AccessTokenClaims, session: SessionRecord, ownerIsAnonymous: Bool,
                        ownerMergedInto: String?, account: SessionWithAccount?) throws -> Caller {
        guard session.userID == claims.sub else { throw LanyardError.sessionEnded }
        if let mergedInto = ownerMergedInto {
            return Caller(userID: session.userID, sessionID: session.id, isAnonymous: true, authTime: session.authTime,
                          mergedInto: mergedInto, account: account, tokenExpiresAt: Date(timeIntervalSince1970: TimeInterval(claims.exp)))
        }
        guard session.isActive(at: dependencies.clock.now()) else {
            if session.revokedReason == SessionEndReason.accountDisabled { throw SessionEnded(userID: session.userID) }
            throw LanyardError.sessionEnded
        }
        return Caller(userID: session.userID, sessionID: session.id, isAnonymous: ownerIsAnonymous,
                      authTime: session.authTime, mergedInto: nil, account: account,
                      tokenExpiresAt: Date(timeIntervalSince1970: TimeInterval(claims.exp)))
    }

    /// A session ended by disabling its account.
    private struct SessionEnded: Error {
        let userID: String
    }

    /// `ACCOUNT_DISABLED` for a session its account's disabling ended, while the account is still disabled (only
    /// then is the account read again); `UNAUTHORIZED` once it was enabled (its person signs in anew).
    private func explainingDisabled(_ body: () throws -> Caller) async throws -> Caller {
        do {
            return try body()
        } catch let ended as SessionEnded {
            let owner = try await dependencies.database.read { try await UserStore($0).find(id: ended.userID) }
            if owner?.disabledAt != nil { throw LanyardError.accountDisabled }
            throw LanyardError.sessionEnded
        }
    }

    /// Unlinking and deletion need a sign-in within `LANYARD_REAUTH_WINDOW`.
    public func requireRecentSignIn(_ caller: Caller) throws {
        let age = dependencies.clock.now().timeIntervalSince(caller.authTime)
        guard age <= dependencies.reauthWindow else { throw LanyardError.reauthenticationRequired }
    }
}
