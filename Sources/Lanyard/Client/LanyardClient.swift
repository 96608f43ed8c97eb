import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Your app's connection to a Lanyard server: signs the person in with Apple, Google or as a guest, keeps the
/// session across launches and bad networks, and calls the API with fresh tokens.
///
/// Make one per server and keep it for the life of the app:
///
/// ```swift
/// let client = LanyardClient(url: URL(string: "https://auth.example.com")!)
///
/// // Sign in with Apple (see `AppleNonce`)
/// let result = try await client.signInWithApple(idToken: idToken, rawNonce: nonce.raw, fullName: fullName)
/// print(result.user.id, result.isNewUser)
///
/// // Call your own backend as that user
/// let request = try await client.authorize(URLRequest(url: URL(string: "https://api.example.com/me")!))
/// ```
///
/// Every method is safe to call from any task at once. Network failures throw `LanyardError.network` and keep
/// the session; only the server ending the session signs the client out.
public actor LanyardClient {
    /// Settings beyond the server's address and the storage.
    ///
    /// ```swift
    /// var options = LanyardClient.Options()
    /// options.timeout = 10
    /// let client = LanyardClient(url: serverURL, options: options)
    /// ```
    public struct Options: Sendable {
        /// The `URLSession` requests go through.
        public var urlSession: URLSession = .shared
        /// Seconds before a request without an answer fails with `.network(.timedOut)`.
        public var timeout: TimeInterval = 30
        /// An access token this close to its expiry (in seconds) is refreshed before use.
        public var refreshLeeway: TimeInterval = 60
        /// The clock the client reads expiry against (tests move it).
        public var now: @Sendable () -> Date = { Date() }

        /// The defaults.
        ///
        /// ```swift
        /// let options = LanyardClient.Options()
        /// ```
        public init() {}
    }

    /// The server's base URL.
    public nonisolated let url: URL
    let transport: Transport
    let storage: any SessionStore
    let options: Options
    let hub: EventHub
    /// The one live connection to the account's change feed, shared by every watcher.
    nonisolated let liveFeed = LiveFeed()
    var session: StoredSession?
    var refreshTask: Task<StoredSession, any Error>?
    /// The redirect answer being (or last) exchanged: the same address handed over again gets its result.
    var redirectInFlight: (callbackURL: URL, result: Task<SignInResult, any Error>)?

    /// A client for the server at `url`, restoring the session `storage` holds (without a request).
    ///
    /// ```swift
    /// let client = LanyardClient(url: URL(string: "http://127.0.0.1:8080")!, storage: MemorySessionStore())
    /// ```
    ///
    /// - Parameters:
    ///   - url: the server, such as `https://auth.example.com`.
    ///   - storage: where the session is kept; the Keychain on Apple platforms and a 0600 file on Linux when omitted.
    ///   - options: timeouts, refresh leeway, the `URLSession`.
    public init(url: URL, storage: (any SessionStore)? = nil, options: Options = Options()) {
        self.url = url
        self.options = options
        self.storage = storage ?? Self.defaultStore(for: url)
        transport = Transport(baseURL: url, session: options.urlSession, timeout: options.timeout)
        let restored = (try? self.storage.data(forKey: StoredSession.storageKey))
            .flatMap { try? JSONDecoder().decode(StoredSession.self, from: $0) }
        session = restored
        hub = EventHub(user: restored?.user)
        liveFeed.attach(self)
    }

    // MARK: State

    /// The signed-in user as last seen, or nil; readable without `await`.
    ///
    /// ```swift
    /// if let user = client.user, !user.isAnonymous { showHome(user) } else { showSignIn() }
    /// ```
    public nonisolated var user: User? { hub.currentUser }

    /// The user's sign-in methods, oldest first (the first is the primary one).
    ///
    /// ```swift
    /// let canUnlink = client.linkedProviders.count > 1
    /// ```
    public nonisolated var linkedProviders: [LinkedProvider] { user?.linkedProviders ?? [] }

    /// Auth events, starting with `.restored` (the current state); each call makes a new stream.
    ///
    /// ```swift
    /// Task {
    ///     for await event in client.authEvents {
    ///         if case .signedOut(let reason) = event { print("signed out:", reason) }
    ///     }
    /// }
    /// ```
    public nonisolated var authEvents: AsyncStream<AuthEvent> { hub.stream() }

    // MARK: Sign-in

    /// Exchanges an Apple identity token for a Lanyard session. A guest session held by the client is upgraded
    /// (or merged into the account that Apple ID already has: `mergedFrom`), so the guest's data stays.
    ///
    /// ```swift
    /// let result = try await client.signInWithApple(
    ///     idToken: String(decoding: credential.identityToken!, as: UTF8.self),
    ///     rawNonce: nonce.raw, fullName: credential.fullName,
    ///     authorizationCode: credential.authorizationCode.map { String(decoding: $0, as: UTF8.self) })
    /// ```
    ///
    /// - Parameters:
    ///   - idToken: the credential's `identityToken`, as text.
    ///   - rawNonce: the `AppleNonce.raw` whose hash the request carried, if any.
    ///   - fullName: Apple gives the name only on the first authorization; pass it so the account keeps it.
    ///   - authorizationCode: lets the server revoke the Apple tokens when the account is deleted.
    @discardableResult
    public func signInWithApple(idToken: String, rawNonce: String? = nil, fullName: PersonNameComponents? = nil,
                                authorizationCode: String? = nil) async throws -> SignInResult {
        try await signIn(.apple(idToken: idToken, rawNonce: rawNonce, authorizationCode: authorizationCode),
                         fullName: fullName)
    }

    /// Exchanges a Google ID token for a Lanyard session; a held guest session is upgraded or merged.
    ///
    /// ```swift
    /// let result = try await client.signInWithGoogle(idToken: googleUser.idToken!.tokenString)
    /// ```
    @discardableResult
    public func signInWithGoogle(idToken: String, nonce: String? = nil) async throws -> SignInResult {
        try await signIn(.google(idToken: idToken, nonce: nonce), fullName: nil)
    }

    /// Exchanges an ID token of any provider the server offers (an OpenID Connect provider such as Microsoft,
    /// Facebook or the team's own) for a Lanyard session; a held guest session is upgraded or merged.
    ///
    /// ```swift
    /// let result = try await client.signIn(with: .microsoft, idToken: msalResult.idToken, nonce: nonce)
    /// ```
    @discardableResult
    public func signIn(with provider: Provider, idToken: String, nonce: String? = nil) async throws -> SignInResult {
        try await signIn(ProviderCredential(provider: provider, idToken: idToken, nonce: nonce), fullName: nil)
    }

    /// The providers the server offers, in its order: which sign-in buttons to show.
    ///
    /// ```swift
    /// let buttons = try await client.providers().map(\.displayName) // ["Apple", "Google", "Microsoft"]
    /// ```
    public func providers() async throws -> [OfferedProvider] {
        try await transport.send(APIRequest("GET", "v1/providers"), bearer: nil, as: [OfferedProvider].self)
    }

    /// Starts a guest session: an account with no sign-in method, which keeps its data when the person signs in
    /// later with `signInWithApple` or `signInWithGoogle`.
    ///
    /// ```swift
    /// if client.user == nil { try await client.signInAnonymously() }
    /// ```
    @discardableResult
    public func signInAnonymously() async throws -> SignInResult {
        let payload = try await transport.send(APIRequest("POST", "v1/auth/anonymous"), bearer: nil,
                                               as: SessionResponse.self)
        return adopt(payload)
    }

    private func signIn(_ credential: ProviderCredential, fullName: PersonNameComponents?) async throws -> SignInResult {
        try await signIn(sending: try APIRequest("POST", "v1/auth/signin/\(credential.provider.rawValue)",
                                                 json: SignInBody(credential, fullName: fullName)))
    }

    /// Sends a sign-in `request` (with a held guest's bearer, so the guest upgrades or merges) and holds the session
    /// it answers.
    func signIn(sending request: APIRequest) async throws -> SignInResult {
        let payload: SessionResponse
        if let guest = session, guest.user.isAnonymous, let bearer = try await guestBearer() {
            payload = try await sendAuthorized(request, firstBearer: bearer, as: SessionResponse.self)
        } else {
            payload = try await transport.send(request, bearer: nil, as: SessionResponse.self)
        }
        return adopt(payload)
    }

    /// The guest's access token for an upgrade, or nil when the guest's session has ended on the server (the
    /// sign-in then goes ahead as a plain one).
    private func guestBearer() async throws -> String? {
        do {
            return try await accessToken()
        } catch LanyardError.invalidRefreshToken, LanyardError.refreshTokenReused, LanyardError.notSignedIn {
            return nil
        }
    }

    /// Holds the session an answer carries, and tells the listeners.
    func adopt(_ payload: SessionResponse) -> SignInResult {
        let stored = StoredSession(payload, receivedAt: options.now())
        var events: [AuthEvent] = [.signedIn(stored.user)]
        if let from = payload.mergedFrom { events.append(.merged(from: from)) }
        hold(stored, events)
        return SignInResult(user: stored.user, isNewUser: payload.isNewUser, mergedFrom: payload.mergedFrom)
    }

    // MARK: Tokens for the app's own backend

    /// A valid access token, refreshed first when it has expired or is about to.
    ///
    /// ```swift
    /// let token = try await client.accessToken()
    /// request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    /// ```
    public func accessToken() async throws -> String {
        guard let current = session else { throw LanyardError.notSignedIn }
        if current.expiresAt.timeIntervalSince(options.now()) > options.refreshLeeway { return current.accessToken }
        return try await refreshedSession(replacing: current.accessToken).accessToken
    }

    /// `request` with `Authorization: Bearer <fresh access token>`, for calls to your own backend, which
    /// verifies the token with the server's JWKS.
    ///
    /// ```swift
    /// let request = try await client.authorize(URLRequest(url: URL(string: "https://api.example.com/notes")!))
    /// let (data, _) = try await URLSession.shared.data(for: request)
    /// ```
    public func authorize(_ request: URLRequest) async throws -> URLRequest {
        var request = request
        request.setValue("Bearer \(try await accessToken())", forHTTPHeaderField: "Authorization")
        return request
    }

    // MARK: Internals shared by the extensions

    /// Sends `request` with a fresh access token; on `401 UNAUTHORIZED`, refreshes once and retries once.
    func sendAuthorized<Response: Decodable>(_ request: APIRequest, firstBearer: String? = nil,
                                             as type: Response.Type) async throws -> Response {
        try Transport.decode(try await sendAuthorized(request, firstBearer: firstBearer))
    }

    @discardableResult
    func sendAuthorized(_ request: APIRequest, firstBearer: String? = nil) async throws -> Data {
        let bearer: String
        if let firstBearer { bearer = firstBearer } else { bearer = try await accessToken() }
        do {
            do {
                return try await transport.send(request, bearer: bearer)
            } catch LanyardError.unauthorized {
                let renewed = try await refreshedSession(replacing: bearer)
                return try await transport.send(request, bearer: renewed.accessToken)
            }
        } catch LanyardError.accountDisabled {
            // An operator disabled the account: its sessions are over.
            if session != nil { hold(nil, [.signedOut(.accountDisabled)]) }
            throw LanyardError.accountDisabled
        } catch LanyardError.accountMerged(let into) {
            // Merged into another account on another device: this session is over.
            if session?.accessToken == bearer { hold(nil, [.signedOut(.accountMerged(into: into))]) }
            throw LanyardError.accountMerged(into: into)
        }
    }

    /// Replaces the held session (nil: signed out), stores it, and sends `events`.
    func hold(_ session: StoredSession?, _ events: [AuthEvent]) {
        self.session = session
        // Foundation's default date coding round-trips exactly: a restored user equals the one stored.
        let data = session.flatMap { try? JSONEncoder().encode($0) }
        try? storage.setData(data, forKey: StoredSession.storageKey)
        hub.update(user: session?.user, events)
    }

    /// Replaces the held session's user and sends `extraEvents`, then `.userUpdated`.
    func update(user: User, _ extraEvents: [AuthEvent] = []) {
        guard var current = session else { return }
        current.user = user
        hold(current, extraEvents + [.userUpdated(user)])
    }

    static func defaultStore(for url: URL) -> any SessionStore {
        let name = "lanyard." + (url.host ?? "server") + (url.port.map { "-\($0)" } ?? "")
        #if canImport(Security)
        return KeychainSessionStore(service: name)
        #else
        let base = ProcessInfo.processInfo.environment["XDG_STATE_HOME"].map(URL.init(fileURLWithPath:))
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/state")
        return FileSessionStore(fileURL: base.appendingPathComponent("lanyard/\(name).json"))
        #endif
    }
}
