import Foundation
import LanyardStore
import LanyardSupport

/// An identity as the API shows it (DESIGN section 3, `User.identities`).
public struct IdentityView: JSONWritable, Sendable, Equatable {
    public var provider: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    public var linkedAt: Date
    public var lastSignInAt: Date?

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("provider"); json.string(provider)
            json.key("email"); json.string(email)
            json.key("email_verified"); json.bool(emailVerified)
            json.key("is_private_email"); json.bool(isPrivateEmail)
            json.key("linked_at"); json.date(linkedAt)
            json.key("last_sign_in_at"); json.date(lastSignInAt)
        }
    }
}

/// The account as the API shows it: DESIGN's `User`, plus `linked_providers`.
public struct UserView: JSONWritable, Sendable, Equatable {
    public var id: String
    public var createdAt: Date
    public var isAnonymous: Bool
    public var displayName: String?
    public var email: String?
    public var identities: [IdentityView]

    /// The providers of the account's identities, oldest link first.
    public var linkedProviders: [String] { identities.map(\.provider) }

    public init(user: UserRecord, identities: [IdentityRecord]) {
        id = user.id
        createdAt = user.createdAt
        isAnonymous = user.isAnonymous
        displayName = user.displayName
        // The primary (first linked) identity's email; other identities may carry other emails, which is normal.
        email = identities.lazy.compactMap(\.email).first
        self.identities = identities.map {
            IdentityView(provider: $0.provider, email: $0.email, emailVerified: $0.emailVerified,
                         isPrivateEmail: $0.isPrivateEmail, linkedAt: $0.linkedAt, lastSignInAt: $0.lastSignInAt)
        }
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { json in writeMembers(to: &json) }
    }

    /// The members without the braces, so `GET /v1/users/me` can add `linked_providers` beside them.
    func writeMembers(to json: inout JSONWriter) {
        json.key("id"); json.string(id)
        json.key("created_at"); json.date(createdAt)
        json.key("is_anonymous"); json.bool(isAnonymous)
        json.key("display_name"); json.string(displayName)
        json.key("email"); json.string(email)
        json.key("identities"); json.array(identities) { $0.value($1) }
    }

    static func load(userID: String, connection: any DatabaseConnection) async throws -> UserView {
        guard let (user, identities) = try await UserStore(connection).findWithIdentities(id: userID) else {
            throw LanyardError.unauthorized("This account no longer exists")
        }
        return UserView(user: user, identities: identities)
    }
}

/// `GET /v1/users/me`: the `User` with `linked_providers` beside its fields.
public struct MeResponse: JSONWritable, Sendable {
    public var user: UserView

    public init(user: UserView) {
        self.user = user
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            user.writeMembers(to: &json)
            json.key("linked_providers"); json.strings(user.linkedProviders)
        }
    }
}

/// The session response of sign-in, anonymous, refresh and reauthenticate (DESIGN section 3).
public struct SessionResponse: JSONWritable, Sendable {
    public var accessToken: String
    public var tokenType = "Bearer"
    public var expiresIn: Int
    public var refreshToken: String
    public var user: UserView
    public var isNewUser: Bool
    public var mergedFrom: String?
    /// Not encoded: lets the server label metrics and logs without parsing the token.
    public var sessionID: String
    /// Not encoded: the session's `auth_time` and `amr`, for a token of another claim style.
    public var authTime: Date
    public var method: String

    /// For tools (the benchmark) that build a response without a session.
    public init(accessToken: String, refreshToken: String, expiresIn: Int, user: UserView, isNewUser: Bool) {
        self.init(tokens: IssuedTokens(accessToken: accessToken, refreshToken: refreshToken, expiresIn: expiresIn,
                                       sessionID: ""), user: user, isNewUser: isNewUser)
    }

    init(tokens: IssuedTokens, user: UserView, isNewUser: Bool, mergedFrom: String? = nil) {
        accessToken = tokens.accessToken
        expiresIn = tokens.expiresIn
        refreshToken = tokens.refreshToken
        sessionID = tokens.sessionID
        authTime = tokens.authTime
        method = tokens.method
        self.user = user
        self.isNewUser = isNewUser
        self.mergedFrom = mergedFrom
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("access_token"); json.string(accessToken)
            json.key("token_type"); json.string(tokenType)
            json.key("expires_in"); json.integer(Int64(expiresIn))
            json.key("refresh_token"); json.string(refreshToken)
            json.key("user"); json.value(user)
            json.key("linked_providers"); json.strings(user.linkedProviders)
            json.key("is_new_user"); json.bool(isNewUser)
            json.key("merged_from"); json.string(mergedFrom)
        }
    }
}

/// `POST /v1/auth/link/{provider}` and `DELETE …` answers.
public struct LinkResponse: JSONWritable, Sendable {
    public var linkedProviders: [String]
    public var message: String
    public var user: UserView?

    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("linked_providers"); json.strings(linkedProviders)
            json.key("message"); json.string(message)
            if let user {
                json.key("user"); json.value(user)
            }
        }
    }
}
