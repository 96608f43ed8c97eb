import Foundation
import LanyardCore
import LanyardStore
import LanyardSupport

/// GoTrue's user: the fields Supabase's clients require, filled from Lanyard's account.
struct GoTrueUser: Encodable {
    let id: String
    let aud = AccessTokens.audience
    let role = "authenticated"
    let email: String
    let phone = ""
    let emailConfirmedAt: Date?
    let confirmedAt: Date?
    let lastSignInAt: Date?
    let appMetadata: [String: JSONValue]
    let userMetadata: [String: JSONValue]
    let identities: [GoTrueIdentity]
    let createdAt: Date
    let updatedAt: Date
    let isAnonymous: Bool
    let isSSOUser = false

    enum CodingKeys: String, CodingKey {
        case id, aud, role, email, phone, identities
        case emailConfirmedAt = "email_confirmed_at", confirmedAt = "confirmed_at", lastSignInAt = "last_sign_in_at"
        case appMetadata = "app_metadata", userMetadata = "user_metadata", createdAt = "created_at"
        case updatedAt = "updated_at", isAnonymous = "is_anonymous", isSSOUser = "is_sso_user"
    }

    init(_ account: AccountDetails) {
        let user = account.user, identities = account.identities
        id = user.id
        // The first linked identity with an email is the account's email, as on `/v1` (reference section 3).
        let primaryEmail = identities.first { $0.email != nil }
        email = primaryEmail?.email ?? ""
        emailConfirmedAt = primaryEmail.flatMap { $0.emailVerified ? $0.linkedAt : nil }
        confirmedAt = emailConfirmedAt
        lastSignInAt = identities.compactMap(\.lastSignInAt).max() ?? user.lastActiveAt
        let providers = identities.isEmpty ? ["anonymous"] : identities.map { GoTrueProviderNames.gotrue($0.provider) }
        appMetadata = ["provider": .string(providers[0]), "providers": .array(providers.map(JSONValue.string))]
        var metadata = account.metadata
        if let name = user.displayName {
            // Where Supabase apps look for the name GoTrue copies from the provider.
            if metadata["full_name"] == nil { metadata["full_name"] = .string(name) }
            if metadata["name"] == nil { metadata["name"] = .string(name) }
        }
        userMetadata = metadata
        self.identities = identities.map(GoTrueIdentity.init)
        createdAt = user.createdAt
        updatedAt = user.updatedAt
        isAnonymous = user.isAnonymous
    }

    /// The claims GoTrue's access tokens carry of their user, as this user object shows them.
    var profileClaims: SupabaseProfileClaims {
        SupabaseProfileClaims(email: email, phone: phone, appMetadata: appMetadata, userMetadata: userMetadata)
    }
}

/// GoTrue's identity: `identity_id` is the row's UUID, `id` the provider's subject.
struct GoTrueIdentity: Encodable {
    let identityID: String
    let id: String
    let userID: String
    let provider: String
    let identityData: [String: JSONValue]
    let email: String?
    let createdAt: Date
    let updatedAt: Date
    let lastSignInAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, provider, email
        case identityID = "identity_id", userID = "user_id", identityData = "identity_data", createdAt = "created_at"
        case updatedAt = "updated_at", lastSignInAt = "last_sign_in_at"
    }

    init(_ identity: IdentityRecord) {
        identityID = identity.id
        id = identity.providerUserID
        userID = identity.userID
        provider = GoTrueProviderNames.gotrue(identity.provider)
        var data: [String: JSONValue] = ["sub": .string(identity.providerUserID),
                                         "provider_id": .string(identity.providerUserID),
                                         "email_verified": .bool(identity.emailVerified)]
        if let email = identity.email { data["email"] = .string(email) }
        if identity.isPrivateEmail { data["is_private_email"] = .bool(true) }
        identityData = data
        email = identity.email
        createdAt = identity.linkedAt
        updatedAt = identity.lastSignInAt ?? identity.linkedAt
        lastSignInAt = identity.lastSignInAt
    }
}

/// GoTrue's session: `expires_at` (seconds since 1970) included, which supabase-swift requires.
struct GoTrueSession: Encodable {
    let accessToken: String
    let tokenType = "bearer"
    let expiresIn: Int
    let expiresAt: Int64
    let refreshToken: String
    let user: GoTrueUser

    enum CodingKeys: String, CodingKey {
        case user
        case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in"
        case expiresAt = "expires_at", refreshToken = "refresh_token"
    }

    init(_ session: IssuedSession, accessToken: String, user: GoTrueUser, now: Date) {
        self.accessToken = accessToken
        expiresIn = session.answer.expiresIn
        expiresAt = now.unixSeconds + Int64(session.answer.expiresIn)
        refreshToken = session.answer.refreshToken
        self.user = user
    }
}

/// `GET /auth/v1/settings`: which ways in exist: the offered providers (in GoTrue's names) and anonymous users.
struct GoTrueSettings: Encodable {
    let external: [String: Bool]
    let disableSignup = false
    let mailerAutoconfirm = false
    let phoneAutoconfirm = false
    let smsProvider = ""
    let samlEnabled = false

    enum CodingKeys: String, CodingKey {
        case external
        case disableSignup = "disable_signup", mailerAutoconfirm = "mailer_autoconfirm"
        case phoneAutoconfirm = "phone_autoconfirm", smsProvider = "sms_provider", samlEnabled = "saml_enabled"
    }

    init(offered: [String]) {
        var external = Dictionary(uniqueKeysWithValues: ["azure", "bitbucket", "discord", "email", "facebook", "figma",
                                                         "github", "gitlab", "kakao", "keycloak", "linkedin_oidc",
                                                         "notion", "phone", "slack_oidc", "spotify", "twitch",
                                                         "twitter", "workos", "zoom"].map { ($0, false) })
        external["apple"] = false
        external["google"] = false
        for name in offered { external[name] = true }
        external["anonymous_users"] = true
        self.external = external
    }
}

struct GoTrueHealth: Encodable {
    let version = "lanyard"
    let name = "Lanyard"
    let description = "Lanyard's GoTrue-compatible surface: native sign-in with Apple, Google and anonymous accounts"
}
