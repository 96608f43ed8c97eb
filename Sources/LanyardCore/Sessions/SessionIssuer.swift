import Foundation
import LanyardStore
import LanyardSupport
import struct LanyardWire.User

/// The tokens handed to a device for one session.
public struct IssuedTokens: Sendable {
    public var accessToken: String
    public var refreshToken: String
    public var expiresIn: Int
    public var sessionID: String
    /// When the session's person last proved who they are, and how (the access token's `auth_time` and `amr`).
    public var authTime: Date = .distantPast
    public var method: String = ""
}

/// A session written in a transaction, before its access token is signed.
struct OpenedSession: Sendable {
    var userID: String
    var sessionID: String
    var refreshToken: String
    var authTime: Date
    var method: String
}

/// Opens sessions: a `sessions` row and its first refresh token (stored hashed) inside the caller's
/// transaction; the access token is signed and the account read after it commits, so a write transaction
/// holds the database for as little as it can.
struct SessionIssuer {
    let dependencies: CoreDependencies

    /// `signedInAt`: when the person last proved who they are, when that was not now (the bridge carries the old
    /// system's sign-in over; it is not a sign-in of its own).
    func open(userID: String, method: String, client: ClientInfo,
              connection: any DatabaseConnection, now: Date, signedInAt: Date? = nil) async throws -> OpenedSession {
        let authTime = min(signedInAt ?? now, now)
        let session = SessionRecord(
            id: dependencies.random.newID(at: now), userID: userID, createdAt: now,
            expiresAt: now.addingTimeInterval(dependencies.refreshTokenTTL), authTime: authTime, amr: method,
            clientIP: client.ip, userAgent: client.userAgent.map { String($0.prefix(512)) })
        let refreshToken = RefreshTokens.generate(session: session.id, dependencies.random)
        try await SessionStore(connection).insert(session, refreshTokenKey: RefreshTokens.storageKey(refreshToken))
        return OpenedSession(userID: userID, sessionID: session.id, refreshToken: refreshToken, authTime: authTime,
                             method: method)
    }

    /// The session response for a committed session: the account as it now is (read now unless the caller
    /// read it already, in a transaction that does not change it), and a signed access token.
    /// `groups` is the `groups` claim read with `account`.
    /// `legacyID` is the account's legacy id read with `account` (the `legacy_id` claim, when tokens carry it).
    func respond(_ opened: OpenedSession, account: User? = nil, groups: GroupsClaim = .none, legacyID: String? = nil,
                 isNewUser: Bool, mergedFrom: String? = nil) async throws -> IssuedSession {
        let (view, groups, legacyID) = if let account {
            (account, groups, legacyID)
        } else {
            try await dependencies.database.read { connection in
                try await User.loadWithGroups(userID: opened.userID, connection: connection)
            }
        }
        let claimed = dependencies.tokenLegacyID ? legacyID : nil
        let accessToken = try dependencies.accessTokens.issue(
            userID: opened.userID, sessionID: opened.sessionID, authTime: opened.authTime, method: opened.method,
            isAnonymous: view.isAnonymous, groups: groups, legacyID: claimed)
        let tokens = IssuedTokens(accessToken: accessToken, refreshToken: opened.refreshToken,
                                  expiresIn: dependencies.accessTokens.lifetime, sessionID: opened.sessionID,
                                  authTime: opened.authTime, method: opened.method)
        var issued = IssuedSession(tokens: tokens, user: view, isNewUser: isNewUser, mergedFrom: mergedFrom)
        issued.groups = groups
        issued.legacyID = claimed
        return issued
    }
}
