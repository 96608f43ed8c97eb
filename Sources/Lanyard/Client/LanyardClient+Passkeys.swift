import Foundation

extension LanyardClient {
    /// Passkeys (reference section 19): Face ID, Touch ID or a security key as a sign-in method, several per
    /// account, no email needed.
    ///
    /// ```swift
    /// let passkey = try await client.passkeys.register(name: "iPhone", with: authenticator)
    /// let result = try await client.passkeys.signIn(with: authenticator)
    /// ```
    public nonisolated var passkeys: PasskeyAuth { PasskeyAuth(client: self) }
}

/// What makes and uses passkeys on this device: `PlatformPasskeyAuthenticator` (AuthenticationServices) on Apple
/// platforms; on others, anything that takes WebAuthn's JSON options and gives its JSON responses (Android's
/// Credential Manager takes and gives exactly these).
///
/// ```swift
/// struct CredentialManagerBridge: PasskeyAuthenticator {
///     func create(_ options: PublicKeyCredentialCreationOptionsJSON) async throws -> RegistrationResponseJSON { … }
///     func get(_ options: PublicKeyCredentialRequestOptionsJSON) async throws -> AuthenticationResponseJSON { … }
/// }
/// ```
public protocol PasskeyAuthenticator: Sendable {
    /// Makes a passkey for the options (`navigator.credentials.create()`).
    func create(_ options: PublicKeyCredentialCreationOptionsJSON) async throws -> RegistrationResponseJSON
    /// Signs the challenge with a passkey the person picks (`navigator.credentials.get()`, discoverable).
    func get(_ options: PublicKeyCredentialRequestOptionsJSON) async throws -> AuthenticationResponseJSON
}

/// The passkey calls: the two ceremonies (each an options request, the authenticator, the server's check) and the
/// account's list. Refusals arrive as `LanyardError.invalidPasskey(reason:)`.
///
/// ```swift
/// let passkeys = try await client.passkeys.list()
/// ```
public struct PasskeyAuth: Sendable {
    let client: LanyardClient

    /// Makes a passkey for the signed-in account and adds it (a guest is upgraded in place). A full account's
    /// sign-in must be recent: `.reauthenticationRequired` otherwise.
    ///
    /// ```swift
    /// let passkey = try await client.passkeys.register(name: "Ada's iPhone", with: authenticator)
    /// ```
    @discardableResult
    public func register(name: String? = nil, with authenticator: some PasskeyAuthenticator) async throws -> Passkey {
        let options = try await registrationOptions()
        return try await register(try await authenticator.create(options), name: name)
    }

    /// The options for a new passkey, for an authenticator this SDK does not drive.
    ///
    /// ```swift
    /// let options = try await client.passkeys.registrationOptions()
    /// ```
    public func registrationOptions() async throws -> PublicKeyCredentialCreationOptionsJSON {
        try await client.sendAuthorized(APIRequest("POST", "v1/auth/passkeys/register/options"),
                                        as: PublicKeyCredentialCreationOptionsJSON.self)
    }

    /// Adds a passkey an authenticator made for `registrationOptions()`.
    ///
    /// ```swift
    /// let passkey = try await client.passkeys.register(credential, name: "YubiKey")
    /// ```
    @discardableResult
    public func register(_ credential: RegistrationResponseJSON, name: String? = nil) async throws -> Passkey {
        let request = try APIRequest("POST", "v1/auth/passkeys/register", json: PasskeyRegisterRequest(credential: credential, name: name))
        let registered = try await client.sendAuthorized(request, as: PasskeyRegistered.self)
        await client.update(user: registered.user, [.linked(.passkey)])
        return registered.passkey
    }

    /// Signs in with a passkey the person picks; no account is named. A guest's data comes along (upgraded or
    /// merged) as with other providers.
    ///
    /// ```swift
    /// let result = try await client.passkeys.signIn(with: authenticator)
    /// ```
    @discardableResult
    public func signIn(with authenticator: some PasskeyAuthenticator) async throws -> SignInResult {
        try await signIn(try await authenticator.get(try await signInOptions()))
    }

    /// A discoverable sign-in's challenge, for an authenticator this SDK does not drive.
    ///
    /// ```swift
    /// let options = try await client.passkeys.signInOptions()
    /// ```
    public func signInOptions() async throws -> PublicKeyCredentialRequestOptionsJSON {
        try await client.transport.send(APIRequest("POST", "v1/auth/passkeys/signin/options"), bearer: nil,
                                        as: PublicKeyCredentialRequestOptionsJSON.self)
    }

    /// Signs in with an assertion an authenticator gave for `signInOptions()`.
    ///
    /// ```swift
    /// let result = try await client.passkeys.signIn(assertion)
    /// ```
    @discardableResult
    public func signIn(_ assertion: AuthenticationResponseJSON) async throws -> SignInResult {
        let request = try APIRequest("POST", "v1/auth/passkeys/signin", json: PasskeySignInRequest(credential: assertion))
        let payload: SessionResponse
        if let guest = await client.session, guest.user.isAnonymous, let bearer = try? await client.accessToken() {
            payload = try await client.sendAuthorized(request, firstBearer: bearer, as: SessionResponse.self)
        } else {
            payload = try await client.transport.send(request, bearer: nil, as: SessionResponse.self)
        }
        return await client.adopt(payload)
    }

    /// Proves the person is still there with one of the account's passkeys (before removing a method or deleting
    /// the account); the session is renewed.
    ///
    /// ```swift
    /// try await client.passkeys.reauthenticate(with: authenticator)
    /// try await client.deleteAccount()
    /// ```
    @discardableResult
    public func reauthenticate(with authenticator: some PasskeyAuthenticator) async throws -> User {
        let assertion = try await authenticator.get(try await signInOptions())
        let request = try APIRequest("POST", "v1/auth/passkeys/signin",
                                     json: PasskeySignInRequest(credential: assertion, intent: .reauthenticate))
        let payload = try await client.sendAuthorized(request, as: SessionResponse.self)
        await client.hold(StoredSession(payload, receivedAt: client.options.now()), [.tokenRefreshed, .userUpdated(payload.user)])
        return payload.user
    }

    /// The account's passkeys, oldest first.
    ///
    /// ```swift
    /// for passkey in try await client.passkeys.list() { print(passkey.name) }
    /// ```
    public func list() async throws -> [Passkey] {
        try await client.sendAuthorized(APIRequest("GET", "v1/users/me/passkeys"), as: PasskeyList.self).passkeys
    }

    /// Renames a passkey.
    ///
    /// ```swift
    /// try await client.passkeys.rename(passkey, to: "Work phone")
    /// ```
    @discardableResult
    public func rename(_ passkey: Passkey, to name: String) async throws -> Passkey {
        try await client.sendAuthorized(try APIRequest("PATCH", "v1/users/me/passkeys/\(passkey.id)", json: PasskeyRenameRequest(name: name)),
                                        as: Passkey.self)
    }

    /// Removes a passkey (a recent sign-in; never the account's last way in: `.cannotUnlinkOnlyProvider`).
    ///
    /// ```swift
    /// try await client.passkeys.remove(lostPhonesPasskey)
    /// ```
    @discardableResult
    public func remove(_ passkey: Passkey) async throws -> User {
        try await client.sendAuthorized(APIRequest("DELETE", "v1/users/me/passkeys/\(passkey.id)"))
        let user = try await client.fetchUser()
        await client.update(user: user, [.unlinked(.passkey)])
        return user
    }
}
