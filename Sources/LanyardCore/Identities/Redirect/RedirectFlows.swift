import Crypto
import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport
import LanyardWire

/// Redirect sign-in (reference section 23): the authorization-code flow with PKCE, for the web and for apps
/// without a native button. `start` keeps the flow in a row (its id is the provider's `state`; no cookie) and
/// answers the provider's page; `callback` redeems the provider's code, checks the ID token with the same verifier
/// as native sign-in and the flow's nonce, and keeps the proven identity under a single-use code of Lanyard's;
/// `exchange` hands that identity to sign-in (a guest's bearer upgrades or merges) or, for a flow a session started
/// with `intent: "link"`, to linking.
public struct RedirectFlows: Sendable {
    /// How long a flow may wait for the provider's callback.
    public static let flowTTL: TimeInterval = 600
    /// How long Lanyard's code may wait for its exchange.
    public static let codeTTL: TimeInterval = 60

    let dependencies: CoreDependencies
    let codes: AuthorizationCodes
    /// Signs Apple's client secret per request (the team's key of Apple's lifecycle); nil when none is set.
    let appleSecret: AppleClientSecret?
    let masterKey: MasterKey
    /// Lanyard's public address: the provider sends the person back under it.
    let issuer: String

    public init(_ dependencies: CoreDependencies, codes: AuthorizationCodes, appleSecret: AppleClientSecret?,
                masterKey: MasterKey, issuer: String) {
        self.dependencies = dependencies
        self.codes = codes
        self.appleSecret = appleSecret
        self.masterKey = masterKey
        self.issuer = issuer
    }

    /// What an app asks for at `authorize`.
    public struct Start: Sendable {
        public var provider: String
        public var redirectURI: String
        public var codeChallenge: String
        public var codeChallengeMethod: String
        public var state: String?
        /// `signin` (default) or `link` (with the bearer of the session that links).
        public var intent: String
        /// `lanyard` or `gotrue` (whose exchange answers in GoTrue's shape).
        public var origin: String

        public init(provider: String, redirectURI: String, codeChallenge: String, codeChallengeMethod: String,
                    state: String?, intent: String = "signin", origin: String = "lanyard") {
            (self.provider, self.redirectURI, self.codeChallenge, self.codeChallengeMethod) =
                (provider, redirectURI, codeChallenge, codeChallengeMethod)
            (self.state, self.intent, self.origin) = (state, intent, origin)
        }
    }

    /// `GET`/`POST /v1/auth/authorize/{provider}`: the provider's page to send the browser to.
    public func start(_ start: Start, caller: Caller?) async throws -> String {
        let method = try dependencies.signInMethods.redirectMethod(named: start.provider)
        guard let redirect = method.redirect else { throw LanyardError.unsupportedProvider(start.provider) }
        guard dependencies.redirect.allows(start.redirectURI) else { throw LanyardError.invalidRedirectURI(start.redirectURI) }
        try RedirectRules.checkChallenge(start.codeChallenge, method: start.codeChallengeMethod)
        if let state = start.state, state.utf8.count > 512 || state.containsNUL {
            throw LanyardError.invalidRequest(field: "state", "state must be at most 512 bytes")
        }
        guard ["signin", "link"].contains(start.intent) else {
            throw LanyardError.invalidRequest(field: "intent", "intent must be signin or link")
        }
        if start.intent == "link" {
            guard let caller, caller.mergedInto == nil else {
                throw LanyardError.unauthorized("Sign in first: intent link acts on the signed-in account")
            }
        }
        let now = dependencies.clock.now()
        let flow = RedirectFlowRecord(
            id: Base64URL.encode(dependencies.random.bytes(32)), provider: method.provider.rawValue, origin: start.origin,
            intent: start.intent, redirectURI: start.redirectURI, codeChallenge: start.codeChallenge, clientState: start.state,
            nonce: Base64URL.encode(dependencies.random.bytes(24)), userID: start.intent == "link" ? caller?.userID : nil,
            sessionID: start.intent == "link" ? caller?.sessionID : nil, createdAt: now, expiresAt: now.addingTimeInterval(Self.flowTTL))
        let endpoints = try await providerEndpoints(redirect, method: method, now: now)
        try await dependencies.database.transaction { connection in
            try await RedirectFlowStore(connection).deleteEnded(before: now.addingTimeInterval(-86_400))
            try await RedirectFlowStore(connection).insert(flow)
        }
        return RedirectRules.authorizationURL(endpoints.authorization, client: redirect,
                                              callback: callbackURL(origin: flow.origin, provider: flow.provider), state: flow.id, nonce: flow.nonce)
    }

    /// Where the browser goes after the provider's callback.
    public enum CallbackOutcome: Sendable, Equatable {
        /// Back to the app: `redirect_uri?code=…&state=…`, or with `error=…` when the provider or the token refused.
        case redirect(String)
    }

    /// `GET`/`POST /v1/auth/callback/{provider}` (and GoTrue's `/auth/v1/callback`): the provider's answer.
    /// Throws `NOT_FOUND` for a state no open flow has (the page says so: there is nowhere safe to send the
    /// browser). Once the flow is known, every outcome goes back to the app: its code, or an OAuth error with a
    /// description (`temporarily_unavailable` when the provider's token endpoint or keys fail: start again).
    public func callback(provider: String?, state: String, code: String?, error: String?,
                         appleUser: String?) async throws -> CallbackOutcome {
        let now = dependencies.clock.now()
        guard let flow = try await dependencies.database.read({ try await RedirectFlowStore($0).find(id: state) }),
              // A flow comes back where it told the provider to: GoTrue's callback names no provider.
              (provider == nil) == (flow.origin == "gotrue"), provider == nil || provider == flow.provider,
              flow.expiresAt > now else {
            throw LanyardError.notFound("This sign-in is unknown or has expired; start it again from the app")
        }
        let claimed = try await dependencies.database.transaction { connection in
            try await RedirectFlowStore(connection).calledBack(id: flow.id, at: now)
        }
        guard claimed else { throw LanyardError.notFound("This sign-in was already answered; start it again from the app") }
        guard error == nil, let code, !code.isEmpty else {
            return .redirect(RedirectRules.back(to: flow, error: error.map(RedirectRules.oauthErrorName) ?? "invalid_request"))
        }
        let providerName = Provider(rawValue: flow.provider)
        guard let method = dependencies.signInMethods.method(providerName), let redirect = method.redirect else {
            throw LanyardError.unsupportedProvider(flow.provider)
        }
        let redeemed: RedeemedCode
        do {
            let endpoints = try await providerEndpoints(redirect, method: method, now: now)
            redeemed = try await codes.redeem(code: code, redirectURI: callbackURL(origin: flow.origin, provider: flow.provider),
                                              clientID: redirect.clientID,
                                              clientSecret: try secret(of: redirect, now: now), tokenEndpoint: endpoints.token)
        } catch {
            // The flow is answered: the app hears that the provider is down and can start again.
            return .redirect(RedirectRules.back(to: flow, error: "temporarily_unavailable",
                                                description: "\(method.displayName) cannot be reached; try again"))
        }
        let verified = await verify(redeemed.idToken, provider: providerName, nonce: flow.nonce)
        guard case .success(let identity) = verified else {
            // The token that came back is not this flow's (another audience, another nonce), or its keys cannot be
            // read: the app hears which, never a bare refusal that looks like a cancel.
            guard case .failure(let refusal) = verified, refusal.code != .providerUnavailable else {
                return .redirect(RedirectRules.back(to: flow, error: "temporarily_unavailable",
                                                    description: "\(method.displayName) cannot be reached; try again"))
            }
            return .redirect(RedirectRules.back(to: flow, error: "access_denied",
                                                description: refusal.details["reason"]?.stringValue ?? refusal.code.rawValue))
        }
        let proven = RedirectProof(identity: identity, name: RedirectRules.appleName(appleUser),
                                   sealedAppleToken: try redeemed.refreshToken.map { try masterKey.seal(Array($0.utf8)) })
        let lanyardCode = Base64URL.encode(dependencies.random.bytes(32))
        let sealed = try masterKey.seal(try JSONEncoder().encode(proven))
        try await dependencies.database.transaction { connection in
            try await RedirectFlowStore(connection).issueCode(id: flow.id, codeHash: RedirectRules.codeHash(lanyardCode),
                                                              expiresAt: now.addingTimeInterval(Self.codeTTL), sealedIdentity: sealed)
        }
        return .redirect(RedirectRules.back(to: flow, code: lanyardCode))
    }

    /// What an exchange answers: a session (sign-in), or the account's methods (a link).
    public enum Exchanged: Sendable {
        case session(IssuedSession)
        case linked(LinkResponse)
    }

    /// `POST /v1/auth/token` (and GoTrue's `grant_type=pkce`): the code, once, with the flow's verifier and (when
    /// given) redirect URI. A code presented is spent whatever the outcome.
    public func exchange(code: String, verifier: String, redirectURI: String?, origin: String, caller: Caller?,
                         client: ClientInfo) async throws -> Exchanged {
        let now = dependencies.clock.now()
        let hash = RedirectRules.codeHash(code)
        let taken = try await dependencies.database.transaction { connection in
            try await RedirectFlowStore(connection).use(codeHash: hash, at: now)
        }
        guard let flow = taken else {
            let known = try await dependencies.database.read { try await RedirectFlowStore($0).find(codeHash: hash) }
            throw LanyardError.invalidGrant(known == nil ? "expired" : "used")
        }
        guard flow.origin == origin, let codeExpiry = flow.codeExpiresAt, codeExpiry > now, let sealed = flow.sealedIdentity
        else { throw LanyardError.invalidGrant("expired") }
        guard RedirectRules.verifies(verifier, challenge: flow.codeChallenge) else { throw LanyardError.invalidGrant("verifier") }
        if let redirectURI, redirectURI != flow.redirectURI { throw LanyardError.invalidGrant("redirect_uri") }
        let proven = try JSONDecoder().decode(RedirectProof.self, from: Data(try masterKey.open(sealed)))
        let identity = proven.identity
        let exchanged: Exchanged
        if flow.intent == "link" {
            // Only the session that started a link finishes it.
            guard let caller, caller.userID == flow.userID, caller.sessionID == flow.sessionID else {
                throw LanyardError.invalidGrant("session")
            }
            exchanged = .linked(try await Linking(dependencies).link(identity, caller: caller, client: client, via: "redirect"))
        } else {
            exchanged = .session(try await SignIn(dependencies).signIn(identity, name: proven.name ?? identity.name,
                                                                        guest: caller, client: client, via: "redirect"))
        }
        if let token = proven.sealedAppleToken { await keepAppleToken(token, of: identity, at: now) }
        return exchanged
    }

    /// Apple's refresh token from the redemption, kept for its revocation like a native sign-in's (best effort: a
    /// failure here never fails the sign-in).
    private func keepAppleToken(_ sealed: [UInt8], of identity: VerifiedIdentity, at now: Date) async {
        guard dependencies.signInMethods.owesAppleRevocation(identity.provider.rawValue) else { return }
        _ = try? await dependencies.database.transaction { connection in
            guard let stored = try await IdentityStore(connection).find(provider: identity.provider.rawValue,
                                                                       providerUserID: identity.subject) else { return }
            try await AppleTokenStore(connection).save(identityID: stored.id, clientID: identity.audience, sealedToken: sealed, at: now)
        }
    }

    /// Where the provider sends the person back: `/v1/auth/callback/{provider}`, or for a flow Supabase's client
    /// started GoTrue's one `/auth/v1/callback` (the address a Supabase project registered at its providers).
    func callbackURL(origin: String, provider: String) -> String {
        origin == "gotrue" ? issuer + "/auth/v1/callback" : issuer + "/v1/auth/callback/" + provider
    }

    private func verify(_ idToken: String, provider: Provider, nonce: String) async -> Result<VerifiedIdentity, LanyardError> {
        do {
            return .success(try await dependencies.providerTokens.verify(idToken, provider: provider, nonce: nonce))
        } catch {
            return .failure(error)
        }
    }

    private func providerEndpoints(_ redirect: RedirectClient, method: SignInMethod,
                                   now: Date) async throws -> (authorization: String, token: String) {
        do {
            return try await codes.endpoints(redirect, now: now)
        } catch {
            throw LanyardError.providerUnavailable(method.displayName)
        }
    }

    private func secret(of redirect: RedirectClient, now: Date) throws -> String {
        switch redirect.secret {
        case .fixed(let secret): return secret
        case .appleSignedPerRequest:
            guard let appleSecret else { throw TokenEndpointError("no Apple key to sign the client secret with") }
            return try appleSecret.make(clientID: redirect.clientID, at: now)
        }
    }
}

/// The identity a callback proved, kept sealed in its flow until the code's exchange.
struct RedirectProof: Codable {
    var provider: String
    var subject: String
    var email: String?
    var emailVerified: Bool
    var isPrivateEmail: Bool
    var tokenName: String?
    var audience: String
    /// Apple's `user.name`, sent once beside the code.
    var name: String?
    var sealedAppleToken: [UInt8]?

    init(identity: VerifiedIdentity, name: String?, sealedAppleToken: [UInt8]?) {
        (provider, subject, email, emailVerified) = (identity.provider.rawValue, identity.subject, identity.email, identity.emailVerified)
        (isPrivateEmail, tokenName, audience) = (identity.isPrivateEmail, identity.name, identity.audience)
        (self.name, self.sealedAppleToken) = (name, sealedAppleToken)
    }

    var identity: VerifiedIdentity {
        VerifiedIdentity(provider: Provider(rawValue: provider), subject: subject, email: email, emailVerified: emailVerified,
                         isPrivateEmail: isPrivateEmail, name: tokenName, audience: audience)
    }
}
