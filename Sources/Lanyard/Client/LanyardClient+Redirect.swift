import Foundation

extension LanyardClient {
    // MARK: Redirect sign-in (reference section 23)

    /// Redirect sign-in, its first half: the URL of `provider`'s own sign-in page to open in a browser, for providers
    /// the app has no native SDK for (a company's Microsoft tenant, any OpenID Connect provider the server offers).
    /// On Apple platforms `signIn(with:redirectURI:presentationAnchor:intent:prefersEphemeralWebBrowserSession:)`
    /// opens it in an `ASWebAuthenticationSession` for you; elsewhere open it yourself and pass the address the
    /// browser comes back to to `completeSignIn(from:)`.
    ///
    /// A PKCE verifier and a `state` wait in the client's `SessionStore` until then, so an app the system ended
    /// meanwhile still finishes; only the verifier's SHA-256 leaves the device. `redirectURI` is the app's own
    /// address, exactly one of the server's `LANYARD_REDIRECT_URIS` (`com.example.app:/callback`, or a universal
    /// link); a sign-in's browser shows the server's page naming an unlisted one. With `.link` the flow is started
    /// with the session's bearer (a request: `.notSignedIn` without a session, `.invalidRedirectURI` for an unlisted
    /// address) and adds the provider to the signed-in account.
    ///
    /// ```swift
    /// let callback = URL(string: "com.example.app:/callback")!
    /// let url = try await client.authorizationURL(for: .microsoft, redirectURI: callback)
    /// openInBrowser(url)
    /// // … later, where the system hands the app its callback address:
    /// let result = try await client.completeSignIn(from: openedURL)
    /// ```
    public func authorizationURL(for provider: Provider, redirectURI: URL,
                                 intent: RedirectIntent = .signIn) async throws -> URL {
        try await startRedirect(for: provider, redirectURI: redirectURI, intent: intent).url
    }

    /// Redirect sign-in's second half: `callbackURL` is the address the browser came back to
    /// (`com.example.app:/callback?code=…&state=…`). Its `state` must be of a flow this device started
    /// (`.invalidGrant(reason: "state")` otherwise, before anything is sent); its code is traded, with the kept
    /// verifier and the redirect URI, for a session: a held guest is upgraded or merged (`SignInResult.mergedFrom`),
    /// `.signedIn` is sent and the session stored. For a `.link` flow the provider joins the signed-in account
    /// (`.linked`, then `.userUpdated`) and the result's `user` is that account.
    ///
    /// The flow is forgotten whatever the outcome, and the same address handed over twice (a scene that opens the
    /// URL and a restored state that does too) is exchanged once: the second call answers the first's result.
    /// Throws `.signInCancelled` when the person declined at the provider, `.providerUnavailable` when the provider
    /// cannot be reached, `.invalidProviderToken` when its token was refused, `.invalidGrant` (`expired`, `used`,
    /// `verifier`, `redirect_uri`, `state`), `.providerConflict` (a link to someone else's account), and
    /// `.invalidRequest` for an address that carries no answer at all.
    ///
    /// ```swift
    /// .onOpenURL { url in
    ///     Task {
    ///         do {
    ///             let result = try await client.completeSignIn(from: url)
    ///             showHome(result.user)
    ///         } catch LanyardError.signInCancelled {
    ///             // the person declined at the provider: stay on the sign-in screen
    ///         }
    ///     }
    /// }
    /// ```
    @discardableResult
    public func completeSignIn(from callbackURL: URL) async throws -> SignInResult {
        if let inFlight = redirectInFlight, inFlight.callbackURL == callbackURL { return try await inFlight.result.value }
        guard let answer = RedirectAnswer(callbackURL) else {
            throw LanyardError.invalidRequest(field: "url", message: "\(callbackURL) carries no sign-in answer (no code, no error).")
        }
        // Run apart from the caller: a caller that gives up must not lose the session its code was traded for.
        let result = Task { try await finishRedirect(answer) }
        redirectInFlight = (callbackURL, result)
        return try await result.value
    }

    /// Starts a flow: the URL to open, and the state it is kept under.
    func startRedirect(for provider: Provider, redirectURI: URL,
                       intent: RedirectIntent) async throws -> (url: URL, state: String) {
        let verifier = PKCE.randomToken(bytes: 32)
        let challenge = PKCE.challenge(for: verifier)
        let state = PKCE.randomToken(bytes: 16)
        let start: URL
        switch intent {
        case .signIn:
            start = authorizeURL(provider, query: [
                ("redirect_uri", redirectURI.absoluteString), ("code_challenge", challenge),
                ("code_challenge_method", "S256"), ("state", state),
            ])
        case .link:
            // A link acts on the signed-in account: the flow is bound to this session by its bearer, so only the
            // POST can start it.
            let request = try APIRequest("POST", "v1/auth/authorize/\(provider.rawValue)", json: AuthorizeRequest(
                redirectURI: redirectURI.absoluteString, codeChallenge: challenge, state: state, intent: intent.rawValue))
            let answer = try await sendAuthorized(request, as: AuthorizeResponse.self)
            guard let url = URL(string: answer.url) else { throw LanyardError.invalidResponse(status: 200) }
            start = url
        }
        let now = options.now()
        var flows = pendingRedirects().filter { now.timeIntervalSince($0.value.startedAt) < PendingRedirect.lifetime }
        flows[state] = PendingRedirect(provider: provider, verifier: verifier, redirectURI: redirectURI.absoluteString,
                                       intent: intent, startedAt: now)
        try keepPendingRedirects(flows)
        return (start, state)
    }

    /// Drops a flow that will not come back (its browser was closed).
    func forgetRedirect(state: String) {
        var flows = pendingRedirects()
        guard flows.removeValue(forKey: state) != nil else { return }
        try? keepPendingRedirects(flows)
    }

    private func finishRedirect(_ answer: RedirectAnswer) async throws -> SignInResult {
        var flows = pendingRedirects()
        guard let state = answer.state, let flow = flows.removeValue(forKey: state) else {
            throw LanyardError.invalidGrant(reason: "state")
        }
        // The code is single-use: whatever happens next, the flow is not kept for a second try. A store that cannot
        // be written must not cost the person this sign-in; the flow then ages out.
        try? keepPendingRedirects(flows)
        if let refusal = answer.refusal { throw refusal }
        let request = try APIRequest("POST", "v1/auth/token", json: TokenRequest(
            code: answer.code ?? "", codeVerifier: flow.verifier, redirectURI: flow.redirectURI))
        guard flow.intent == .link else { return try await signIn(sending: request) }
        // A link is finished by the session that started it, and its code is presented once: no retry that would
        // find it spent.
        let linked: LinkResponse = try Transport.decode(try await transport.send(request, bearer: try await accessToken()))
        let user: User
        if let answered = linked.user { user = answered } else { user = try await fetchUser() }
        update(user: user, [.linked(flow.provider)])
        return SignInResult(user: user, isNewUser: false, mergedFrom: nil)
    }

    /// `GET /v1/auth/authorize/{provider}` with `query`, encoded strictly (a `+` or `&` in a value stays itself).
    private func authorizeURL(_ provider: Provider, query: [(String, String)]) -> URL {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let path = url.appendingPathComponent("v1/auth/authorize").appendingPathComponent(provider.rawValue)
        var components = URLComponents(url: path, resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery = query.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value)"
        }.joined(separator: "&")
        return components.url!
    }

    private func pendingRedirects() -> [String: PendingRedirect] {
        guard let data = try? storage.data(forKey: PendingRedirect.storageKey) else { return [:] }
        return (try? JSONDecoder().decode([String: PendingRedirect].self, from: data)) ?? [:]
    }

    private func keepPendingRedirects(_ flows: [String: PendingRedirect]) throws {
        try storage.setData(flows.isEmpty ? nil : try JSONEncoder().encode(flows), forKey: PendingRedirect.storageKey)
    }
}
