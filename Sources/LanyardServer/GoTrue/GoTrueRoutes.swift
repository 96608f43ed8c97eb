import Foundation
import Hummingbird
import LanyardCore
import struct LanyardWire.RefreshBody
import LanyardSupport

/// `/auth/v1` (reference section 12): the part of GoTrue's API that Supabase's client libraries call for native
/// sign-in, on Lanyard's own accounts, sessions and rules. Handlers translate shapes; the services decide.
struct GoTrueRoutes {
    let api: APIContext
    let keys: SigningKeyRing
    let anonKey: String?

    func register(on router: Router<LanyardRequestContext>) {
        let group = router.group("auth/v1").add(middleware: GoTrueMiddleware(anonKey: anonKey, metrics: api.metrics))
        // Both grants count as sign-ins; `link_identity` also counts against the account's link limit (`token`).
        group.group().add(middleware: RateLimit(api, .signIn, per: .clientIP)).post("token", use: token)
        group.group().add(middleware: RateLimit(api, .anonymous, per: .clientIP)).post("signup", use: signUp)
        // Email codes (reference section 18): `otp` is limited like `/v1/auth/email/start`, inside its transaction,
        // and by the sign-in limit too: with `create_user: false` it answers whether an address has an account
        // (GoTrue's `otp_disabled`) before any mail is counted.
        group.group().add(middleware: RateLimit(api, .signIn, per: .clientIP)).post("otp", use: otp)
        group.group().add(middleware: RateLimit(api, .signIn, per: .clientIP)).post("verify", use: verifyOTP)
        let signedIn = group.group().add(middleware: BearerAuthentication(api, .required))
        signedIn.get("user", use: user)
        signedIn.put("user", use: updateUser)
        signedIn.post("logout", use: logout)
        signedIn.get("user/identities", use: identities)
        signedIn.delete("user/identities/:identity_id", use: unlinkIdentity)
        // Redirect sign-in (Supabase's `signInWithOAuth` with the PKCE flow): browser navigations, without the
        // project's key; the exchange at `token` with `grant_type=pkce`.
        group.group().add(middleware: RateLimit(api, .signIn, per: .clientIP)).get("authorize", use: authorize)
        group.get("callback") { request, _ in try await RedirectRoutes(api: api).callbackByQuery(request, provider: nil) }
        group.post("callback") { request, _ in try await RedirectRoutes(api: api).callbackByForm(request, provider: nil) }
        group.get("settings", use: settings)
        group.get("health") { _, _ in try JSONResponse.make(GoTrueHealth()) }
        group.get(".well-known/jwks.json") { _, _ in
            try JSONResponse.make(await keys.currentJWKS(),
                                  headers: [.cacheControl: "public, max-age=\(WellKnownRoutes.jwksMaxAge)"])
        }
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
            group.on("**", method: method) { request, _ -> Response in
                throw GoTrueError.unsupported(method: request.method.rawValue, path: request.uri.path)
            }
        }
    }

    // MARK: Sessions

    @Sendable func token(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        switch request.uri.queryParameters["grant_type"].map(String.init) ?? "" {
        case "id_token": return try await idTokenGrant(request, context: context)
        case "pkce": return try await pkceGrant(request, context: context)
        case "refresh_token":
            let body = try await JSONBody.decode(RefreshBody.self, from: request)
            let session = try await Refresh(api.dependencies).refresh(token: body.refreshToken,
                                                                      client: api.client(request, context))
            return try await respond(session)
        case let grant: throw GoTrueError.unsupportedGrant(grant)
        }
    }

    /// Sign-in with a provider's ID token; with `link_identity: true` and a user's bearer, a link followed by a
    /// sign-in with the identity just linked (the new session supabase-swift's `linkIdentityWithIdToken` expects).
    private func idTokenGrant(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(GoTrueIDTokenBody.self, from: request)
        let provider = try api.dependencies.signInMethods.idTokenProvider(named: GoTrueProviderNames.lanyard(body.provider))
        let client = api.client(request, context)
        var guest: Caller?
        if body.linkIdentity {
            let caller = try await api.caller(request)
            try await api.dependencies.rateLimiter.check(.link, key: caller.userID)
            _ = try await Linking(api.dependencies).link(provider: provider, idToken: body.idToken, nonce: body.nonce,
                                                         caller: caller, client: client)
        } else {
            guest = await guestCaller(request)
        }
        let signIn = SignInRequest(idToken: body.idToken, nonce: body.nonce, givenName: nil, familyName: nil)
        return try await respond(try await SignIn(api.dependencies).signIn(provider: provider, request: signIn,
                                                                           guest: guest, client: client))
    }

    /// `GET /auth/v1/authorize?provider&redirect_to&code_challenge&code_challenge_method=s256`: Supabase's
    /// `signInWithOAuth` sends the browser here; the flow is `/v1/auth/authorize`'s, coming back to GoTrue's
    /// `/auth/v1/callback`. Only the PKCE flow is served: the implicit flow's tokens in a URL fragment are not.
    @Sendable func authorize(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        guard let challenge = query["code_challenge"].map(String.init), !challenge.isEmpty else {
            return RedirectRoutes.page(LanyardError.invalidRequest(field: "code_challenge", """
                Lanyard serves Supabase's PKCE flow only: create the client with flowType 'pkce' \
                (the implicit flow's tokens in the address are not offered)
                """))
        }
        return await RedirectRoutes.startPage(api, .init(
            provider: GoTrueProviderNames.lanyard(query["provider"].map(String.init) ?? ""),
            redirectURI: query["redirect_to"].map(String.init) ?? "", codeChallenge: challenge,
            codeChallengeMethod: query["code_challenge_method"].map(String.init) ?? "", state: nil, origin: "gotrue"))
    }

    /// `POST /auth/v1/token?grant_type=pkce {"auth_code", "code_verifier"}` (Supabase's `exchangeCodeForSession`):
    /// the code a redirect brought back, once, with its verifier; a guest's bearer upgrades or merges.
    private func pkceGrant(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(GoTruePKCEBody.self, from: request)
        let exchanged = try await api.redirectFlows.exchange(code: body.authCode, verifier: body.codeVerifier, redirectURI: nil,
                                                             origin: "gotrue", caller: await guestCaller(request),
                                                             client: api.client(request, context))
        guard case .session(let session) = exchanged else { throw LanyardError.internalError }
        return try await respond(session)
    }

    /// A guest's bearer upgrades or merges, as on `/v1`; anything else in `Authorization` (the project's
    /// `apikey`, an expired or foreign token, a signed-in user's token) is ignored, as Supabase's clients send it.
    private func guestCaller(_ request: Request) async -> Caller? {
        guard let token = try? BearerToken.parse(request),
              let caller = try? await Authenticator(api.dependencies).authenticateAllowingMerged(bearer: token),
              caller.isAnonymous else { return nil }
        return caller
    }

    @Sendable func signUp(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(GoTrueSignUpBody.self, from: request)
        if body.email != nil { throw GoTrueError.emailDisabled }
        if body.phone != nil { throw GoTrueError.phoneDisabled }
        _ = try UserMetadata.encoded(body.data)  // refused before the account exists, not after
        let session = try await AnonymousAccounts(api.dependencies).create(client: api.client(request, context))
        if !body.data.isEmpty {
            try await UserMetadata(api.dependencies).update(userID: session.answer.user.id.rawValue, with: body.data)
        }
        return try await respond(session)
    }

    @Sendable func logout(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        // GoTrue's default scope is global.
        let scopeName = request.uri.queryParameters["scope"].map(String.init) ?? "global"
        guard let scope = SessionManagement.SignOutScope(rawValue: scopeName) else {
            throw LanyardError.invalidRequest(field: "scope", "scope must be global, local or others")
        }
        try await SessionManagement(api.dependencies).signOut(caller, scope: scope, client: api.client(request, context))
        return JSONResponse.noContent()
    }

    // MARK: The user

    @Sendable func user(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        return try JSONResponse.make(GoTrueUser(try await AccountDetails.load(userID: caller.userID, api.dependencies)))
    }

    @Sendable func updateUser(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await JSONBody.decode(GoTrueUserBody.self, from: request)
        if body.asksForUnsupported { throw GoTrueError.emailDisabled }
        try await UserMetadata(api.dependencies).update(userID: caller.userID, with: body.data)
        return try JSONResponse.make(GoTrueUser(try await AccountDetails.load(userID: caller.userID, api.dependencies)))
    }

    @Sendable func identities(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        struct Identities: Encodable { let identities: [GoTrueIdentity] }
        let account = try await AccountDetails.load(userID: caller.userID, api.dependencies)
        return try JSONResponse.make(Identities(identities: account.identities.map(GoTrueIdentity.init)))
    }

    /// Unlinks by the identity's row id, with Lanyard's rules (recent sign-in, never the last identity).
    @Sendable func unlinkIdentity(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let identityID = try context.identifier("identity_id")
        do {
            // Every kind of identity (an email address, each passkey) unlinks by its id, as in GoTrue.
            _ = try await Linking(api.dependencies).unlink(identityID: identityID, userID: caller.userID, caller: caller,
                                                           actor: nil, client: api.client(request, context))
        } catch let error as LanyardError where error.code == .notFound {
            throw GoTrueError(status: 404, code: "identity_not_found", message: "Identity doesn't exist")
        }
        return try JSONResponse.make([String: String]())
    }

    /// A code by email, for `verify`; the answer is the same whether or not the address has an account.
    @Sendable func otp(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(GoTrueOTPBody.self, from: request)
        if body.phone != nil, body.email == nil { throw GoTrueError.phoneDisabled }
        guard let email = body.email else { throw LanyardError.invalidRequest(field: "email", "email is required") }
        guard api.dependencies.signInMethods.offers(.email) else { throw GoTrueError.emailDisabled }
        do {
            try await EmailFlows(api.dependencies).startForGoTrue(email: email, createUser: body.createUser,
                                                                  client: api.client(request, context))
        } catch let error as LanyardError where error.code == .rateLimited {
            // GoTrue's own name for a mail limit, which Supabase's clients show as such.
            throw GoTrueError(status: 429, code: "over_email_send_rate_limit", message: error.message,
                              retryAfter: error.retryAfter)
        } catch let error as LanyardError where error.code == .notFound {
            // `create_user: false` for an address without an account: GoTrue sends nothing and says so.
            throw GoTrueError(status: 422, code: "otp_disabled", message: "Signups not allowed for otp")
        }
        return try JSONResponse.make([String: String]())
    }

    @Sendable func verifyOTP(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(GoTrueVerifyBody.self, from: request)
        let outcome = try await EmailFlows(api.dependencies).verifyForGoTrue(email: body.email, code: body.token,
                                                                             recovery: body.type == "recovery",
                                                                             client: api.client(request, context))
        guard case .session(let session) = outcome else { throw LanyardError.internalError }
        return try await respond(session)
    }

    @Sendable func settings(_ request: Request, context: LanyardRequestContext) async throws -> Response {
        // GoTrue's settings name what its clients can start: ID-token providers and email (no passkeys in GoTrue).
        let offered = api.dependencies.signInMethods.offered.filter { $0.kind != .passkey }
            .map { GoTrueProviderNames.gotrue($0.provider.rawValue) }
        return try JSONResponse.make(GoTrueSettings(offered: offered))
    }

    /// The session in GoTrue's shape, its access token in Supabase's claim style with the user's profile claims.
    private func respond(_ session: IssuedSession) async throws -> Response {
        let user = GoTrueUser(try await AccountDetails.load(userID: session.answer.user.id.rawValue, api.dependencies))
        let accessToken = try api.dependencies.accessTokens.issue(
            userID: session.answer.user.id.rawValue, sessionID: session.sessionID, authTime: session.authTime, method: session.method,
            isAnonymous: user.isAnonymous, style: .supabase, profile: user.profileClaims, groups: session.groups,
            legacyID: session.legacyID)
        return try JSONResponse.make(GoTrueSession(session, accessToken: accessToken, user: user,
                                                   now: api.dependencies.clock.now()))
    }
}
