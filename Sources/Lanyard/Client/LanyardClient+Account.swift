import Foundation

extension LanyardClient {
    // MARK: Sign-in methods

    /// Adds a sign-in method to the signed-in account (never signs anyone out). Conflicts throw
    /// `.providerConflict` with the reason.
    ///
    /// ```swift
    /// do {
    ///     try await client.link(.google(idToken: googleUser.idToken!.tokenString))
    /// } catch LanyardError.providerConflict(.identityInUse, _) {
    ///     alert("That Google account belongs to another account")
    /// }
    /// ```
    @discardableResult
    public func link(_ credential: ProviderCredential) async throws -> User {
        let request = try APIRequest("POST", "v1/auth/link/\(credential.provider.rawValue)",
                                     json: ProviderTokenBody(credential))
        let payload = try await sendAuthorized(request, as: LinkResponse.self)
        guard let user = payload.user else { return try await refreshUser() }
        update(user: user, [.linked(credential.provider)])
        return user
    }

    /// Removes a sign-in method. Needs a recent sign-in (else `.reauthenticationRequired`: call
    /// `reauthenticate(_:)` and retry); the last method cannot be removed (`.cannotUnlinkOnlyProvider`).
    ///
    /// ```swift
    /// do {
    ///     try await client.unlink(.google)
    /// } catch LanyardError.reauthenticationRequired {
    ///     try await client.reauthenticate(.apple(idToken: freshAppleToken))
    ///     try await client.unlink(.google)
    /// }
    /// ```
    @discardableResult
    public func unlink(_ provider: Provider) async throws -> User {
        try await sendAuthorized(APIRequest("DELETE", "v1/auth/link/\(provider.rawValue)"))
        let user = try await fetchUser()
        update(user: user, [.unlinked(provider)])
        return user
    }

    /// Proves again that the person is who they are, with a fresh credential of one of the account's sign-in
    /// methods; unlinking and deleting the account need this when the last sign-in is older than the server's
    /// window. The session is renewed.
    ///
    /// ```swift
    /// try await client.reauthenticate(.apple(idToken: idToken, rawNonce: nonce.raw))
    /// try await client.deleteAccount()
    /// ```
    @discardableResult
    public func reauthenticate(_ credential: ProviderCredential) async throws -> User {
        let request = try APIRequest("POST", "v1/auth/reauthenticate/\(credential.provider.rawValue)",
                                     json: ProviderTokenBody(credential))
        let payload = try await sendAuthorized(request, as: SessionResponse.self)
        hold(StoredSession(payload, receivedAt: options.now()), [.tokenRefreshed, .userUpdated(payload.user)])
        return payload.user
    }

    // MARK: Profile

    /// Reads the user from the server (another device may have linked a method or changed the name).
    ///
    /// ```swift
    /// let user = try await client.refreshUser()
    /// ```
    @discardableResult
    public func refreshUser() async throws -> User {
        let user = try await fetchUser()
        update(user: user)
        return user
    }

    /// The account as `refreshUser()` reads it, with how many ways back in it has: an app nudges an account with a
    /// single sign-in method to add a second (an email address, say) before it loses its Apple ID.
    ///
    /// ```swift
    /// if try await client.account().recovery.methods == 1 { showAddARecoveryEmail() }
    /// ```
    public func account() async throws -> AccountResponse {
        let account = try await sendAuthorized(APIRequest("GET", "v1/users/me"), as: AccountResponse.self)
        update(user: account.user)
        return account
    }

    /// Sets the name the account shows; nil or blank clears it.
    ///
    /// ```swift
    /// try await client.updateProfile(displayName: "Ada Lovelace")
    /// ```
    @discardableResult
    public func updateProfile(displayName: String?) async throws -> User {
        let user = try await sendAuthorized(try APIRequest("PATCH", "v1/users/me", json: ProfileUpdate(displayName: displayName)),
                                            as: User.self)
        update(user: user)
        return user
    }

    func fetchUser() async throws -> User {
        try await sendAuthorized(APIRequest("GET", "v1/users/me"), as: AccountResponse.self).user
    }

    // MARK: Sessions

    /// The account's signed-in devices; `isCurrent` marks this one.
    ///
    /// ```swift
    /// let devices = try await client.sessions()
    /// ```
    public func sessions() async throws -> [DeviceSession] {
        try await sendAuthorized(APIRequest("GET", "v1/sessions"), as: SessionList.self).sessions
    }

    /// Signs one device out. Revoking this device's own session signs the client out.
    ///
    /// ```swift
    /// if let lost = try await client.sessions().first(where: { !$0.isCurrent }) {
    ///     try await client.revokeSession(lost)
    /// }
    /// ```
    public func revokeSession(_ session: DeviceSession) async throws {
        try await revokeSession(id: session.id)
    }

    /// Signs the device with session `id` out.
    ///
    /// ```swift
    /// try await client.revokeSession(id: sessionID)
    /// ```
    public func revokeSession(id: DeviceSession.ID) async throws {
        let own = session?.sessionID == id.rawValue
        try await sendAuthorized(APIRequest("DELETE", "v1/sessions/\(id)"))
        if own { hold(nil, [.signedOut(.userRequested)]) }
    }

    /// Signs out: this device (`.local`, the default), every device (`.global`) or every other device
    /// (`.others`). For `.local` and `.global` the client forgets its session even when the server cannot be
    /// reached (the error is still thrown, so the app can tell the person other devices may stay signed in).
    ///
    /// ```swift
    /// try? await client.signOut()
    /// ```
    public func signOut(scope: SignOutScope = .local) async throws {
        guard session != nil else { return }
        let request = try APIRequest("POST", "v1/auth/signout", json: SignOutBody(scope: scope))
        do {
            try await sendAuthorized(request)
        } catch LanyardError.unauthorized, LanyardError.invalidRefreshToken, LanyardError.refreshTokenReused,
                LanyardError.notSignedIn {
            // The server already holds the session as ended.
        } catch {
            if scope != .others { signOutLocally() }
            throw error
        }
        if scope != .others { signOutLocally() }
    }

    private func signOutLocally() {
        if session != nil { hold(nil, [.signedOut(.userRequested)]) }
    }

    /// Deletes the account with its sign-in methods, sessions and data, and signs out. Needs a recent sign-in
    /// (else `.reauthenticationRequired`).
    ///
    /// ```swift
    /// try await client.deleteAccount()
    /// ```
    public func deleteAccount() async throws {
        try await sendAuthorized(APIRequest("DELETE", "v1/users/me"))
        hold(nil, [.signedOut(.accountDeleted)])
    }
}
