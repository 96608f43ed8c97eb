import Foundation

// Switching day (reference section 24): the bridge, `POST /v1/auth/migrate/{source}`.
extension LanyardClient {
    /// The bridge from Firebase Auth: sends the signed-in user's current Firebase ID token once and signs in with the
    /// Lanyard session it answers, as any sign-in does (stored, `.signedIn`), with no sign-in screen. The account
    /// imported with that uid answers; otherwise one is made from the token's Apple and Google identities, and an
    /// anonymous Firebase user comes across as a guest. `account().legacyID` is then the uid your backend keys its
    /// data by.
    ///
    /// ```swift
    /// if let old = Auth.auth().currentUser, client.user == nil {
    ///     try await client.migrate(fromFirebase: try await old.getIDToken())
    ///     try Auth.auth().signOut() // the old session's work is done
    /// }
    /// ```
    ///
    /// A signed-in (not guest) session held already crossed, or signed in another way: it is answered as is
    /// (`isNewUser` false) and nothing is sent, so the app may call this on every launch until it drops the Firebase
    /// SDK. A guest held is refused with `.invalidRequest(field: "session", …)`: the bridge cannot bring a guest's
    /// data along, so bridge before starting a guest, or sign the guest out first. Throws `.invalidProviderToken`
    /// (`expired`, `issuer` for another project, `signature`, `malformed`…), `.notFound` (a user no import brought
    /// and the token cannot describe), `.providerConflict` (its identities are another legacy account's),
    /// `.accountDisabled`, `.unsupportedProvider` (the server has no Firebase project configured).
    @discardableResult
    public func migrate(fromFirebase idToken: String) async throws -> SignInResult {
        try await migrate(.firebase, body: FirebaseMigrationRequest(idToken: idToken))
    }

    /// The bridge from Supabase Auth, as `migrate(fromFirebase:)` (the same rules for a session held): the signed-in
    /// user's current access token. An anonymous Supabase user comes across as a guest; the anon key is refused
    /// (`.invalidProviderToken(reason: "role")`).
    ///
    /// ```swift
    /// if let old = try? await supabase.auth.session, client.user == nil {
    ///     try await client.migrate(fromSupabase: old.accessToken)
    /// }
    /// ```
    @discardableResult
    public func migrate(fromSupabase accessToken: String) async throws -> SignInResult {
        try await migrate(.supabase, body: SupabaseMigrationRequest(accessToken: accessToken))
    }

    /// The bridge from Clerk, as `migrate(fromFirebase:)` (the same rules for a session held): the signed-in user's
    /// current session token. The user must have been imported (`.notFound` otherwise); impersonation, pending
    /// sessions and JWT templates' tokens are refused (`.invalidProviderToken`).
    ///
    /// ```swift
    /// if let token = try await Clerk.shared.session?.getToken()?.jwt, client.user == nil {
    ///     try await client.migrate(fromClerk: token)
    /// }
    /// ```
    @discardableResult
    public func migrate(fromClerk sessionToken: String) async throws -> SignInResult {
        try await migrate(.clerk, body: ClerkMigrationRequest(sessionToken: sessionToken))
    }

    private func migrate(_ source: LegacySource, body: some Encodable) async throws -> SignInResult {
        if let held = session {
            guard !held.user.isAnonymous else {
                throw LanyardError.invalidRequest(field: "session", message: """
                    A guest session is held: bridge the old session before starting a guest, or sign the guest out first.
                    """)
            }
            return SignInResult(user: held.user, isNewUser: false, mergedFrom: nil)
        }
        let request = try APIRequest("POST", "v1/auth/migrate/\(source.rawValue)", json: body)
        return adopt(try await transport.send(request, bearer: nil, as: SessionResponse.self))
    }
}
