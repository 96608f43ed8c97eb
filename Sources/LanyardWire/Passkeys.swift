import Foundation

// Passkeys (reference section 19). The options and credentials are WebAuthn Level 3's JSON forms, camelCase as
// the W3C names them, so a browser's `PublicKeyCredential.parseCreationOptionsFromJSON`, Android's Credential
// Manager and the SDK's authenticators take and give them unchanged. Binary values are base64url without padding.

/// A credential to leave out of a registration, or to allow at a sign-in.
public struct PublicKeyCredentialDescriptorJSON: Sendable, Codable, Equatable {
    public var type: String
    /// base64url of the credential id.
    public var id: String
    public var transports: [String]?

    public init(id: String, transports: [String]? = nil) {
        (self.type, self.id, self.transports) = ("public-key", id, transports)
    }
}

/// `POST /v1/auth/passkeys/register/options`: what `navigator.credentials.create()` (or
/// `ASAuthorizationPlatformPublicKeyCredentialProvider`) needs to make a passkey for the signed-in account.
///
/// ```swift
/// let options = try await client.passkeys.registrationOptions()
/// print(options.rp.id, options.challenge)
/// ```
public struct PublicKeyCredentialCreationOptionsJSON: Sendable, Codable, Equatable {
    public struct RelyingParty: Sendable, Codable, Equatable {
        public var id: String
        public var name: String
        public init(id: String, name: String) { (self.id, self.name) = (id, name) }
    }

    public struct UserEntity: Sendable, Codable, Equatable {
        /// base64url of the account's random user handle (never its id or address).
        public var id: String
        public var name: String
        public var displayName: String
        public init(id: String, name: String, displayName: String) { (self.id, self.name, self.displayName) = (id, name, displayName) }
    }

    public struct Parameters: Sendable, Codable, Equatable {
        public var type: String
        /// A COSE algorithm: -7 (ES256) or -257 (RS256).
        public var alg: Int
        public init(alg: Int) { (self.type, self.alg) = ("public-key", alg) }
    }

    public struct Selection: Sendable, Codable, Equatable {
        public var residentKey: String
        public var requireResidentKey: Bool
        public var userVerification: String
        public init(residentKey: String, requireResidentKey: Bool, userVerification: String) {
            (self.residentKey, self.requireResidentKey, self.userVerification) = (residentKey, requireResidentKey, userVerification)
        }
    }

    public var rp: RelyingParty
    public var user: UserEntity
    /// base64url; single use, for 5 minutes.
    public var challenge: String
    public var pubKeyCredParams: [Parameters]
    /// Milliseconds.
    public var timeout: Int
    public var excludeCredentials: [PublicKeyCredentialDescriptorJSON]
    public var authenticatorSelection: Selection
    public var attestation: String

    public init(rp: RelyingParty, user: UserEntity, challenge: String, pubKeyCredParams: [Parameters], timeout: Int,
                excludeCredentials: [PublicKeyCredentialDescriptorJSON], authenticatorSelection: Selection, attestation: String) {
        (self.rp, self.user, self.challenge, self.pubKeyCredParams) = (rp, user, challenge, pubKeyCredParams)
        (self.timeout, self.excludeCredentials, self.authenticatorSelection, self.attestation) =
            (timeout, excludeCredentials, authenticatorSelection, attestation)
    }
}

/// `POST /v1/auth/passkeys/signin/options`: a challenge for a discoverable sign-in (no account named).
///
/// ```swift
/// let options = try await client.passkeys.signInOptions()
/// ```
public struct PublicKeyCredentialRequestOptionsJSON: Sendable, Codable, Equatable {
    /// base64url; single use, for 5 minutes.
    public var challenge: String
    public var rpId: String
    /// Empty: the authenticator offers the passkeys it holds for `rpId`.
    public var allowCredentials: [PublicKeyCredentialDescriptorJSON]
    public var userVerification: String
    /// Milliseconds.
    public var timeout: Int

    public init(challenge: String, rpId: String, allowCredentials: [PublicKeyCredentialDescriptorJSON] = [],
                userVerification: String, timeout: Int) {
        (self.challenge, self.rpId, self.allowCredentials, self.userVerification, self.timeout) =
            (challenge, rpId, allowCredentials, userVerification, timeout)
    }
}

/// A new passkey as the authenticator returned it (`RegistrationResponseJSON`).
///
/// ```swift
/// let credential = try await authenticator.create(options)
/// let registered = try await client.passkeys.register(credential, name: "iPhone")
/// ```
public struct RegistrationResponseJSON: Sendable, Codable, Equatable {
    public struct Response: Sendable, Codable, Equatable {
        /// base64url of the client data JSON.
        public var clientDataJSON: String
        /// base64url of the CBOR attestation object.
        public var attestationObject: String
        public var transports: [String]?

        public init(clientDataJSON: String, attestationObject: String, transports: [String]? = nil) {
            (self.clientDataJSON, self.attestationObject, self.transports) = (clientDataJSON, attestationObject, transports)
        }
    }

    /// base64url of the credential id (`rawId` says the same).
    public var id: String
    public var rawId: String
    public var type: String
    public var response: Response
    public var authenticatorAttachment: String?

    public init(id: String, response: Response, authenticatorAttachment: String? = nil) {
        (self.id, self.rawId, self.type, self.response, self.authenticatorAttachment) =
            (id, id, "public-key", response, authenticatorAttachment)
    }
}

/// A passkey's answer to a sign-in challenge (`AuthenticationResponseJSON`).
///
/// ```swift
/// let assertion = try await authenticator.get(options)
/// let session = try await client.passkeys.signIn(assertion)
/// ```
public struct AuthenticationResponseJSON: Sendable, Codable, Equatable {
    public struct Response: Sendable, Codable, Equatable {
        public var clientDataJSON: String
        public var authenticatorData: String
        public var signature: String
        /// base64url of the user handle the passkey was made with.
        public var userHandle: String?

        public init(clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String?) {
            (self.clientDataJSON, self.authenticatorData, self.signature, self.userHandle) =
                (clientDataJSON, authenticatorData, signature, userHandle)
        }
    }

    public var id: String
    public var rawId: String
    public var type: String
    public var response: Response
    public var authenticatorAttachment: String?

    public init(id: String, response: Response, authenticatorAttachment: String? = nil) {
        (self.id, self.rawId, self.type, self.response, self.authenticatorAttachment) =
            (id, id, "public-key", response, authenticatorAttachment)
    }
}

/// `POST /v1/auth/passkeys/register`.
public struct PasskeyRegisterRequest: Sendable, Codable, Equatable {
    public var credential: RegistrationResponseJSON
    /// Shown in the account's list; "Passkey" when absent.
    public var name: String?

    public init(credential: RegistrationResponseJSON, name: String? = nil) {
        (self.credential, self.name) = (credential, name)
    }
}

/// What a passkey sign-in is for: a session (`signin`, the default) or proving the signed-in person is still
/// there (`reauthenticate`, with the account's own passkey).
public enum PasskeyIntent: String, Sendable, Codable, CaseIterable {
    case signin
    case reauthenticate
}

/// `POST /v1/auth/passkeys/signin`.
public struct PasskeySignInRequest: Sendable, Codable, Equatable {
    public var credential: AuthenticationResponseJSON
    public var intent: PasskeyIntent?

    public init(credential: AuthenticationResponseJSON, intent: PasskeyIntent? = nil) {
        (self.credential, self.intent) = (credential, intent)
    }
}

/// One of the account's passkeys.
///
/// ```swift
/// for passkey in try await client.passkeys.list() { print(passkey.name, passkey.lastUsedAt ?? passkey.createdAt) }
/// ```
public struct Passkey: Sendable, Codable, Equatable, Identifiable {
    public var id: ID
    public var name: String
    public var createdAt: Date
    public var lastUsedAt: Date?
    /// Synced to the person's other devices (iCloud Keychain, Google Password Manager).
    public var backedUp: Bool

    public init(id: ID, name: String, createdAt: Date, lastUsedAt: Date?, backedUp: Bool) {
        (self.id, self.name, self.createdAt, self.lastUsedAt, self.backedUp) = (id, name, createdAt, lastUsedAt, backedUp)
    }

    enum CodingKeys: String, CodingKey {
        case id, name, createdAt = "created_at", lastUsedAt = "last_used_at", backedUp = "backed_up"
    }
}

/// The answer to a registration: the passkey, and the account with its sign-in methods.
public struct PasskeyRegistered: Sendable, Codable, Equatable {
    public var passkey: Passkey
    public var user: User
    public var linkedProviders: [Provider]

    public init(passkey: Passkey, user: User, linkedProviders: [Provider]) {
        (self.passkey, self.user, self.linkedProviders) = (passkey, user, linkedProviders)
    }

    enum CodingKeys: String, CodingKey { case passkey, user, linkedProviders = "linked_providers" }
}

/// `GET /v1/users/me/passkeys`.
public struct PasskeyList: Sendable, Codable, Equatable {
    public var passkeys: [Passkey]
    public init(passkeys: [Passkey]) { self.passkeys = passkeys }
}

/// `PATCH /v1/users/me/passkeys/{id}`: a passkey's new name (1 to 64 characters, not blank).
///
/// ```swift
/// let body = PasskeyRenameRequest(name: "Work phone")
/// ```
public struct PasskeyRenameRequest: Sendable, Codable, Equatable {
    public var name: String

    public init(name: String) {
        self.name = name
    }
}
