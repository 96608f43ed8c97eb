import Foundation
import LanyardStore
import LanyardSupport
import LanyardWire

// The account's answers are the contract's wire types (`LanyardWire`), built here from the rows. The hot ones
// (a sign-in's or refresh's `SessionResponse`, `GET /v1/users/me`) are written by `JSONWriter` rather than
// `JSONEncoder`: 4.5 µs against 26 µs a session answer, measured on one core by `lanyard-bench micro`
// (`session_response_json_write`, `session_response_json_encoder`), some 4% of a sign-in's CPU.
// `WireWriterTests` checks each writer writes exactly what the type's `Codable` form does.

extension User {
    /// the reference's `User` from the account's row and its identities in link order.
    public init(user: UserRecord, identities: [IdentityRecord]) {
        self.init(id: User.ID(user.id), createdAt: user.createdAt, isAnonymous: user.isAnonymous, displayName: user.displayName,
                  // The primary (first linked) identity's email; other identities may carry other emails, which is normal.
                  email: identities.lazy.compactMap(\.email).first,
                  // In link order the first is the primary: the one the account was created or upgraded with, or the
                  // oldest remaining once it is unlinked (reference section 1); a merge appends what it moves.
                  identities: identities.enumerated().map { index, identity in
                      Identity(provider: Provider(rawValue: identity.provider), email: identity.email,
                               emailVerified: identity.emailVerified, isPrivateEmail: identity.isPrivateEmail,
                               linkedAt: identity.linkedAt, lastSignInAt: identity.lastSignInAt, primary: index == 0)
                  })
    }

    /// The providers' wire names, oldest link first.
    var providerNames: [String] { identities.map(\.provider.rawValue) }

    static func load(userID: String, connection: any DatabaseConnection) async throws -> User {
        try await loadWithGroups(userID: userID, connection: connection).user
    }

    /// The account with its `groups` claim and its legacy id, from the same read.
    static func loadWithGroups(userID: String, connection: any DatabaseConnection) async throws -> (user: User, groups: GroupsClaim, legacyID: String?) {
        guard let (user, identities) = try await UserStore(connection).findWithIdentities(id: userID) else {
            throw LanyardError.unauthorized("This account no longer exists")
        }
        return (User(user: user, identities: identities), GroupsClaim(stored: user.groupClaims), user.legacy?.id)
    }
}

extension Identity: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("provider"); json.string(provider.rawValue)
            json.key("email"); json.string(email)
            json.key("email_verified"); json.bool(emailVerified)
            json.key("is_private_email"); json.bool(isPrivateEmail)
            json.key("linked_at"); json.date(linkedAt)
            json.key("last_sign_in_at"); json.date(lastSignInAt)
            json.key("primary"); json.bool(primary)
        }
    }
}

extension User: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.object { json in writeMembers(to: &json) }
    }

    /// The members without the braces, so `GET /v1/users/me` can add `linked_providers` beside them.
    func writeMembers(to json: inout JSONWriter) {
        json.key("id"); json.string(id.rawValue)
        json.key("created_at"); json.date(createdAt)
        json.key("is_anonymous"); json.bool(isAnonymous)
        json.key("display_name"); json.string(displayName)
        json.key("email"); json.string(email)
        json.key("identities"); json.array(identities) { $0.value($1) }
    }
}

extension SessionResponse: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("access_token"); json.string(accessToken)
            json.key("token_type"); json.string(tokenType)
            json.key("expires_in"); json.integer(Int64(expiresIn))
            json.key("refresh_token"); json.string(refreshToken)
            json.key("user"); json.value(user)
            json.key("linked_providers"); json.strings(linkedProviders.map(\.rawValue))
            json.key("is_new_user"); json.bool(isNewUser)
            json.key("merged_from"); json.string(mergedFrom?.rawValue)
        }
    }
}

extension LinkResponse {
    /// An unlink's answer: the identities left, in link order.
    init(remaining: [IdentityRecord], message: String) {
        self.init(linkedProviders: remaining.map { Provider(rawValue: $0.provider) }, message: message)
    }
}

extension LinkResponse: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("linked_providers"); json.strings(linkedProviders.map(\.rawValue))
            json.key("message"); json.string(message)
            if let user {
                json.key("user"); json.value(user)
            }
        }
    }
}

/// `GET` and `PATCH /v1/users/me`, written by hand (the most frequent authenticated answer).
extension AccountResponse: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            user.writeMembers(to: &json)
            json.key("linked_providers"); json.strings(user.providerNames)
            json.key("recovery"); json.object { recovery in
                recovery.key("methods"); recovery.integer(Int64(self.recovery.methods))
            }
            json.key("legacy_id"); json.string(legacyID)
            json.key("legacy_source"); json.string(legacySource)
        }
    }
}

/// A session just opened or rotated: the answer the device gets, and what the server keeps to itself to label
/// metrics and logs and to sign a token of another claim style (GoTrue's) without parsing the one it holds.
public struct IssuedSession: JSONWritable, Sendable {
    public var answer: SessionResponse
    public var sessionID: String
    /// The session's `auth_time` and `amr`.
    public var authTime: Date
    public var method: String
    /// The access token's `groups` claim, for a token issued again in another style (GoTrue's).
    public var groups = GroupsClaim.none
    /// The access token's `legacy_id` claim, when tokens carry it.
    public var legacyID: String?

    init(tokens: IssuedTokens, user: User, isNewUser: Bool, mergedFrom: String? = nil) {
        answer = SessionResponse(accessToken: tokens.accessToken, expiresIn: tokens.expiresIn,
                                 refreshToken: tokens.refreshToken, user: user, isNewUser: isNewUser,
                                 mergedFrom: mergedFrom.map { User.ID($0) })
        sessionID = tokens.sessionID
        authTime = tokens.authTime
        method = tokens.method
    }

    /// Writes the device's answer.
    public func write(to writer: inout JSONWriter) {
        answer.write(to: &writer)
    }
}
