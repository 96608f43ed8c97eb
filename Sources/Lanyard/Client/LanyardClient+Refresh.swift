import Foundation

extension LanyardClient {
    /// The session after one refresh, shared by every caller that needs it at the same time: however many
    /// requests find the access token expired, one refresh request goes to the server.
    ///
    /// - Parameter staleAccessToken: the token the caller found expired or refused; when the held session already
    ///   has another one, a refresh happened meanwhile and its result is answered without a new request.
    func refreshedSession(replacing staleAccessToken: String) async throws -> StoredSession {
        if let running = refreshTask { return try await running.value }
        guard let current = session else { throw LanyardError.notSignedIn }
        if current.accessToken != staleAccessToken { return current }
        let task = Task { try await self.refresh(current) }
        refreshTask = task
        defer { refreshTask = nil }
        return try await task.value
    }

    /// Rotates `current`'s refresh token. The answer is held only when `current` is still the held session (a
    /// sign-in or sign-out meanwhile wins). The server ending the session signs out; a network failure keeps it.
    private func refresh(_ current: StoredSession) async throws -> StoredSession {
        let payload: SessionResponse
        do {
            payload = try await transport.send(
                try APIRequest("POST", "v1/auth/refresh", json: RefreshBody(refreshToken: current.refreshToken)),
                bearer: nil, as: SessionResponse.self)
        } catch let error as LanyardError {
            if let reason = Self.signOutReason(error), session?.refreshToken == current.refreshToken {
                hold(nil, [.signedOut(reason)])
            }
            throw error
        }
        let renewed = StoredSession(payload, receivedAt: options.now())
        guard session?.refreshToken == current.refreshToken else {
            // A sign-in or sign-out won meanwhile: answer with what the client holds now.
            if let session { return session }
            throw LanyardError.notSignedIn
        }
        let userChanged = renewed.user != current.user
        hold(renewed, [.tokenRefreshed] + (userChanged ? [.userUpdated(renewed.user)] : []))
        return renewed
    }

    /// The errors of a refresh that mean the session is over.
    static func signOutReason(_ error: LanyardError) -> SignOutReason? {
        switch error {
        case .invalidRefreshToken: .sessionEnded
        case .refreshTokenReused: .refreshTokenReused
        case .accountDisabled: .accountDisabled
        case .accountMerged(let into): .accountMerged(into: into)
        default: nil
        }
    }
}
