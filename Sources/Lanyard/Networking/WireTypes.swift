import Foundation

// The server's answers and request bodies that the SDK reads and writes (DESIGN sections 3 and 7).

/// Sign-in, anonymous, refresh and reauthenticate.
struct SessionPayload: Decodable, Sendable {
    let accessToken: String
    let expiresIn: Int
    let refreshToken: String
    let user: User
    let isNewUser: Bool
    let mergedFrom: String?

    enum CodingKeys: String, CodingKey {
        case user
        case accessToken = "access_token", expiresIn = "expires_in", refreshToken = "refresh_token"
        case isNewUser = "is_new_user", mergedFrom = "merged_from"
    }
}

/// `POST` and `DELETE /v1/auth/link/{provider}`.
struct LinkPayload: Decodable, Sendable {
    let user: User?
}

struct SessionsPayload: Decodable, Sendable {
    let sessions: [DeviceSession]
}

struct RecordPayload<Value: Decodable & Sendable>: Decodable, Sendable {
    let id: String
    let version: Int
    let updatedAt: Date
    let deleted: Bool?
    let data: Value?

    enum CodingKeys: String, CodingKey {
        case id, version, deleted, data
        case updatedAt = "updated_at"
    }
}

struct ChangesPayload<Value: Decodable & Sendable>: Decodable, Sendable {
    let records: [RecordPayload<Value>]
    let nextCursor: String?
    let hasMore: Bool

    enum CodingKeys: String, CodingKey {
        case records
        case nextCursor = "next_cursor", hasMore = "has_more"
    }
}

/// Bodies with an ID token: sign-in, link and reauthenticate.
struct ProviderTokenBody: Encodable, Sendable {
    let idToken: String
    let nonce: String?
    let givenName: String?
    let familyName: String?
    let authorizationCode: String?

    init(_ credential: ProviderCredential, fullName: PersonNameComponents? = nil) {
        idToken = credential.idToken
        nonce = credential.nonce
        givenName = fullName?.givenName
        familyName = fullName?.familyName
        authorizationCode = credential.authorizationCode
    }

    enum CodingKeys: String, CodingKey {
        case nonce
        case idToken = "id_token", givenName = "given_name", familyName = "family_name"
        case authorizationCode = "authorization_code"
    }
}

struct RefreshBody: Encodable, Sendable {
    let refreshToken: String
    enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
}

struct SignOutBody: Encodable, Sendable {
    let scope: String
}

struct ProfileBody: Encodable, Sendable {
    let displayName: String?
    enum CodingKeys: String, CodingKey { case displayName = "display_name" }

    func encode(to encoder: any Encoder) throws {
        // `null` clears the name, so it is written even when nil.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(displayName, forKey: .displayName)
    }
}

struct RecordBody<Value: Encodable & Sendable>: Encodable, Sendable {
    let data: Value
}
