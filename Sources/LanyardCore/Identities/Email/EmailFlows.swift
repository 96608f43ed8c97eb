import Foundation
import LanyardProviders
import LanyardStore
import LanyardSupport
import LanyardWire

/// The email identity's flows (reference section 18): `start` sends one mail holding a 6-digit code and a link;
/// `verify` takes the code, `complete` finishes once the link was confirmed in a browser; either ends as a
/// proven `email` identity handed to the same sign-in, linking and re-authentication as every provider's.
/// The session only ever goes to the device holding the flow's secret; opening the link grants nothing.
public struct EmailFlows: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// What finishing a flow answers: a session (sign-in, re-authentication) or the account's methods (link).
    public enum Outcome: Sendable {
        case session(IssuedSession)
        case linked(LinkResponse)
    }

    /// Who asked for a flow: a device (`lanyard`, holding the secret), a GoTrue client, or an operator.
    public enum Origin: String, Sendable {
        case lanyard, gotrue, recovery
    }

    // MARK: start

    /// `POST /v1/auth/email/start`. The answer is the same whether or not the address has an account.
    public func start(_ request: EmailStartRequest, caller: Caller?, client: ClientInfo) async throws -> EmailFlowStarted {
        let intent = request.intent ?? .signin
        if intent != .signin, caller == nil {
            throw LanyardError.unauthorized("Sign in first: intent \(intent.rawValue) acts on the signed-in account")
        }
        // A guest's session ended by its merge may retry a sign-in, never act on an account.
        if intent != .signin, caller?.mergedInto != nil { throw LanyardError.sessionEnded }
        if let redirect = request.redirectTo, !dependencies.email.redirectURLs.contains(redirect) {
            throw LanyardError.invalidRequest(field: "redirect_to", "redirect_to must be one of LANYARD_EMAIL_REDIRECT_URLS, exactly")
        }
        let address = try Self.address(request.email)
        if intent == .reauthenticate, let caller {
            try await requireOwnEmailIdentity(address, caller: caller)
        }
        let secret = EmailSecretGenerator.token(dependencies.random)
        let flow = try await open(address: address, intent: intent, origin: .lanyard, secret: secret, caller: caller,
                                  redirectTo: request.redirectTo, createUser: true,
                                  accountID: intent == .signin ? nil : caller?.userID, client: client)
        return EmailFlowStarted(flowID: flow.id, flowSecret: secret, match: flow.match,
                                expiresIn: Int(dependencies.email.flowTTL), resendAfter: Int(dependencies.email.addressInterval))
    }

    /// A GoTrue client's `POST /auth/v1/otp`: a code only (no link, no device secret), found again by address.
    /// With `createUser: false` an address no account signs in with gets no mail and `NOT_FOUND`, as GoTrue answers.
    public func startForGoTrue(email: String, createUser: Bool, client: ClientInfo) async throws {
        let address = try Self.address(email)
        if !createUser {
            let owner = try await dependencies.database.read { connection in
                try await IdentityStore(connection).find(provider: Provider.email.rawValue, providerUserID: address.value)
            }
            guard owner != nil else { throw LanyardError.notFound("No account signs in with this email address") }
        }
        _ = try await open(address: address, intent: .signin, origin: .gotrue, secret: nil, caller: nil, redirectTo: nil,
                           createUser: createUser, accountID: nil, client: client)
    }

    /// `POST /v1/admin/users/{id}/recovery`: a code to the account's email identity, audited, and a webhook.
    public func sendRecovery(userID: String, actor: String, client: ClientInfo) async throws -> String {
        let owned = try await dependencies.database.read { connection in
            try await UserStore(connection).findWithIdentities(id: userID)
        }
        guard let (user, identities) = owned, user.mergedInto == nil else { throw LanyardError.notFound("No such user") }
        guard let email = identities.first(where: { $0.provider == Provider.email.rawValue }) else {
            throw LanyardError.invalidRequest(field: "user", "This account has no email identity to send a recovery code to")
        }
        let address = try Self.address(email.providerUserID)
        let flow = try await open(address: address, intent: .signin, origin: .recovery, secret: nil, caller: nil,
                                  redirectTo: nil, createUser: false, accountID: userID, client: client,
                                  audit: (actor: actor, userID: userID))
        return flow.id
    }

    /// The flow and its mail, in one transaction after the limits: per client IP first (a flood from one address
    /// is refused before anything is queued), then per address, then for the deployment.
    private func open(address: EmailAddress, intent: EmailIntent, origin: Origin, secret: String?, caller: Caller?,
                      redirectTo: String?, createUser: Bool, accountID: String?, client: ClientInfo,
                      audit: (actor: String, userID: String)? = nil) async throws -> EmailFlowRecord {
        guard dependencies.signInMethods.offers(.email) else { throw LanyardError.unsupportedProvider("email") }
        let dependencies = self.dependencies
        let settings = dependencies.email
        let now = dependencies.clock.now()
        let code = EmailSecretGenerator.code(dependencies.random)
        let linkToken = origin == .lanyard ? EmailSecretGenerator.token(dependencies.random) : nil
        let secrets = dependencies.emailSecrets
        var record = EmailFlowRecord(
            id: "ef_" + dependencies.random.hexString(byteCount: 16), address: address.value, intent: intent.rawValue,
            origin: origin.rawValue, secretHash: secret.map(secrets.secretHash), codeHash: "", linkHash: linkToken.map(secrets.linkHash),
            match: EmailSecretGenerator.match(dependencies.random), userID: accountID,
            sessionID: intent == .signin ? nil : caller?.sessionID, redirectTo: redirectTo, clientIP: client.ip,
            userAgent: client.userAgent.map { String($0.prefix(300)) }, createUser: createUser, createdAt: now,
            expiresAt: now.addingTimeInterval(settings.flowTTL))
        record.codeHash = secrets.codeHash(flowID: record.id, code: code)
        let flow = record
        let link = linkToken.map { "\(dependencies.accessTokens.issuer)/e/\($0)" }
        let rendered = EmailTemplates(folder: settings.templatesFolder).render(
            intent: intent.rawValue, origin: origin.rawValue,
            values: .init(code: code, link: link, minutes: Int(settings.flowTTL / 60), address: address.value))
        let content = MailContent(subject: rendered.subject, text: rendered.text, html: rendered.html, code: code,
                                  link: link, messageID: "\(flow.id)@\(Self.messageDomain(settings.fromAddress))")
        let sealed = try secrets.seal(content)
        let limits = Self.limits(settings, address: address, clientIP: client.ip, origin: origin)
        let wrongCodes = Self.wrongCodeLimit(settings, address: address)
        try await dependencies.database.transactionRetryingConflicts { connection in
            let counters = EmailLimitStore(connection)
            if let wait = wrongCodes.rule.exhausted(try await counters.find(key: wrongCodes.key), at: now) {
                throw LanyardError.rateLimited(retryAfter: wait.seconds)
            }
            for (key, rule) in limits {
                switch rule.take(try await counters.lock(key: key), at: now) {
                case .success(let counter): try await counters.save(key: key, counter)
                case .failure(let wait): throw LanyardError.rateLimited(retryAfter: wait.seconds)
                }
            }
            try await EmailFlowStore(connection).insert(flow)
            try await EmailDeliveryStore(connection).enqueue(flowID: flow.id, recipient: address.value, userID: accountID,
                                                             intent: origin == .recovery ? "recovery" : intent.rawValue,
                                                             sealedBody: sealed, at: now)
            if let audit {
                try await dependencies.audit(connection, at: now, clientIP: client.ip)
                    .write(.recoverySent, userID: audit.userID, details: ["actor": audit.actor, "flow_id": flow.id])
            }
        }
        dependencies.mailQueued()
        return flow
    }

    /// The limits a start passes, in order. An operator's recovery is not the client's: no per-IP limit, and no
    /// minute to wait after the person's own mail, but it counts toward the address's hour.
    static func limits(_ settings: EmailSettings, address: EmailAddress, clientIP: String?,
                       origin: Origin) -> [(String, EmailLimitRule)] {
        var limits: [(String, EmailLimitRule)] = []
        if let clientIP, origin != .recovery {
            limits.append(("ip:" + clientIP, EmailLimitRule(interval: 0, perWindow: settings.ipPerHour, window: 3600)))
        }
        limits.append(("address:" + address.value, EmailLimitRule(interval: origin == .recovery ? 0 : settings.addressInterval,
                                                                  perWindow: settings.addressPerHour, window: 3600)))
        limits.append(("all", EmailLimitRule(interval: 0, perWindow: settings.maxPerHour, window: 3600)))
        return limits
    }

    /// Wrong codes of one address across all its flows (reference section 25): past the limit its codes are not
    /// checked and its starts are refused until the hour is over, so five flows an hour cannot give 25 guesses.
    static func wrongCodeLimit(_ settings: EmailSettings, address: String) -> (key: String, rule: EmailLimitRule) {
        ("wrong:" + address, EmailLimitRule(interval: 0, perWindow: settings.wrongCodesPerHour, window: 3600))
    }

    static func wrongCodeLimit(_ settings: EmailSettings, address: EmailAddress) -> (key: String, rule: EmailLimitRule) {
        wrongCodeLimit(settings, address: address.value)
    }

    static func address(_ text: String) throws -> EmailAddress {
        do { return try EmailAddress(text) } catch { throw LanyardError.invalidRequest(field: "email", error.message) }
    }

    private static func messageDomain(_ from: String) -> String {
        from.split(separator: "@").last.map(String.init) ?? "lanyard.localhost"
    }

    private func requireOwnEmailIdentity(_ address: EmailAddress, caller: Caller) async throws {
        let owned = try await dependencies.database.read { connection in
            try await UserStore(connection).findWithIdentities(id: caller.userID)
        }
        guard let (_, identities) = owned else { throw LanyardError.unauthorized("This account no longer exists") }
        guard identities.contains(where: { $0.provider == Provider.email.rawValue && $0.providerUserID == address.value }) else {
            throw LanyardError.identityNotOnAccount("Email", accountHasProvider: identities.contains { $0.provider == Provider.email.rawValue })
        }
    }

    // MARK: finish

    /// `POST /v1/auth/email/verify`: the code, on the device holding the flow's secret.
    public func verify(_ request: EmailVerifyRequest, caller: Caller?, client: ClientInfo) async throws -> Outcome {
        let flow = try await flow(id: request.flowID, secret: request.flowSecret)
        try await checkCode(request.code, of: flow)
        return try await finish(flow, caller: caller, client: client)
    }

    /// GoTrue's `POST /auth/v1/verify`: the code of the address's newest open GoTrue flow, or with `type:
    /// "recovery"` of its newest operator's recovery flow. The two are kept apart, so a later `otp` never
    /// supersedes a recovery code, and a guess is checked against one code only.
    public func verifyForGoTrue(email: String, code: String, recovery: Bool, client: ClientInfo) async throws -> Outcome {
        try await verifyWithoutSecret(email: email, code: code, origin: recovery ? .recovery : .gotrue, client: client)
    }

    /// `POST /v1/auth/email/recover`: an operator's recovery code (no device holds that flow's secret, so the
    /// address and the code are the proof), whatever codes were asked for since.
    public func recover(_ request: EmailRecoverRequest, client: ClientInfo) async throws -> IssuedSession {
        guard case .session(let session) = try await verifyWithoutSecret(email: request.email, code: request.code,
                                                                          origin: .recovery, client: client) else {
            throw LanyardError.internalError
        }
        return session
    }

    /// The code against the address's newest flow of `origin` that can still be finished.
    private func verifyWithoutSecret(email: String, code: String, origin: Origin, client: ClientInfo) async throws -> Outcome {
        let address = try Self.address(email)
        let now = dependencies.clock.now()
        let flow = try await dependencies.database.read { connection in
            try await EmailFlowStore(connection).newestWithoutSecret(address: address.value, origins: [origin.rawValue], at: now,
                                                                     maxWrongCodes: EmailFlowRules.maxWrongCodes)
        }
        guard let flow else { throw LanyardError.invalidCode(reason: "expired", attemptsLeft: 0) }
        try await checkCode(code, of: flow)
        return try await finish(flow, caller: nil, client: client)
    }

    /// How often a waiting `complete` reads its flow again when no wake-up came.
    static let rereadInterval: Duration = .seconds(2)

    /// `POST /v1/auth/email/complete`: once the link was confirmed; waits up to `wait` seconds (30 at most) for it.
    public func complete(_ request: EmailCompleteRequest, caller: Caller?, client: ClientInfo) async throws -> Outcome {
        let wait = TimeInterval(min(max(request.wait ?? 0, 0), 30))
        var flow = try await flow(id: request.flowID, secret: request.flowSecret)
        let deadline = ContinuousClock.now + .seconds(wait)
        while flow.confirmedAt == nil {
            if let reason = EmailFlowRules.refusal(flow, at: dependencies.clock.now()) {
                throw EmailFlowRules.error(for: reason, flow)
            }
            // A wrong number on the link's page ended the link: the device stops waiting and asks for the code.
            if flow.linkEndedAt != nil {
                throw LanyardError.invalidCode(reason: "link_ended", attemptsLeft: max(0, EmailFlowRules.maxWrongCodes - flow.wrongCodes))
            }
            let now = ContinuousClock.now
            guard now < deadline else { throw LanyardError.emailNotConfirmed }
            // Woken when the link is confirmed (here, or on another instance through a notification); read again at
            // least every few seconds all the same, so a wake-up lost on the way delays, never loses.
            await dependencies.signals.waitForEmailFlow(flow.id, upTo: min(deadline - now, Self.rereadInterval))
            try Task.checkCancellation()
            flow = try await self.flow(id: request.flowID, secret: request.flowSecret)
        }
        return try await finish(flow, caller: caller, client: client)
    }

    /// The flow `id` names, when `secret` is its device's; one answer for an unknown flow and a wrong secret.
    private func flow(id: String, secret: String) async throws -> EmailFlowRecord {
        let found = try await dependencies.database.read { connection in
            try await EmailFlowStore(connection).find(id: id)
        }
        guard let found, let stored = found.secretHash,
              EmailSecrets.matches(dependencies.emailSecrets.secretHash(secret), stored) else {
            throw LanyardError.notFound("No email flow has this flow_id and flow_secret")
        }
        return found
    }

    /// Every guess at a code counts against its address's hour before it is compared (given back when it was
    /// right), so racing guesses cannot pass the limit; a wrong one also counts against the flow (five and it is
    /// dead). Past the address's limit no code is compared at all.
    private func checkCode(_ typed: String, of flow: EmailFlowRecord) async throws {
        if let reason = EmailFlowRules.refusal(flow, at: dependencies.clock.now()) {
            throw EmailFlowRules.error(for: reason, flow)
        }
        let limit = Self.wrongCodeLimit(dependencies.email, address: flow.address)
        let now = dependencies.clock.now()
        try await dependencies.database.transaction { connection in
            let counters = EmailLimitStore(connection)
            let counter = try await counters.lock(key: limit.key)
            if let wait = limit.rule.exhausted(counter, at: now) { throw LanyardError.rateLimited(retryAfter: wait.seconds) }
            try await counters.save(key: limit.key, limit.rule.counting(counter, at: now))
        }
        if codeMatches(typed, flow) {
            try await dependencies.database.transaction { connection in
                let counters = EmailLimitStore(connection)
                try await counters.save(key: limit.key, limit.rule.uncounting(try await counters.lock(key: limit.key)))
            }
            return
        }
        let counted = try await dependencies.database.transaction { connection in
            try await EmailFlowStore(connection).recordWrongCode(id: flow.id)
        }
        guard let counted else { throw LanyardError.invalidCode(reason: "used", attemptsLeft: 0) }
        throw EmailFlowRules.wrongCode(after: counted)
    }

    private func codeMatches(_ typed: String, _ flow: EmailFlowRecord) -> Bool {
        guard let code = EmailFlowRules.normalizedCode(typed) else { return false }
        return EmailSecrets.matches(dependencies.emailSecrets.codeHash(flowID: flow.id, code: code), flow.codeHash)
    }

    /// A merge's proof of the other account (reference section 15): the code of a sign-in flow this device
    /// started, checked like `verify`'s; the identity it proves. The merge uses the flow up in its own transaction
    /// (a dry run leaves it for the merge).
    public func prove(_ proof: EmailProof) async throws -> VerifiedIdentity {
        let flow = try await flow(id: proof.flowID, secret: proof.flowSecret)
        guard flow.intent == EmailIntent.signin.rawValue else {
            throw LanyardError.invalidRequest(field: "proof.flow_id", "A merge's proof is a flow started with intent signin")
        }
        try await checkCode(proof.code, of: flow)
        return Self.identity(of: flow)
    }

    static func identity(of flow: EmailFlowRecord) -> VerifiedIdentity {
        VerifiedIdentity(provider: .email, subject: flow.address, email: flow.address, emailVerified: true,
                         isPrivateEmail: false, name: nil, audience: "email")
    }

    /// Uses the flow: once, whoever races.
    private func use(_ flow: EmailFlowRecord) async throws -> VerifiedIdentity {
        let now = dependencies.clock.now()
        let used = try await dependencies.database.transaction { connection in
            try await EmailFlowStore(connection).markUsed(id: flow.id, at: now, maxWrongCodes: EmailFlowRules.maxWrongCodes)
        }
        guard used else { throw LanyardError.invalidCode(reason: "used", attemptsLeft: 0) }
        return Self.identity(of: flow)
    }

    /// Uses the flow and hands its proven identity to sign-in, linking or re-authentication.
    private func finish(_ flow: EmailFlowRecord, caller: Caller?, client: ClientInfo) async throws -> Outcome {
        let intent = EmailIntent(rawValue: flow.intent) ?? .signin
        if intent != .signin {
            // Only the session that started a link or a re-authentication finishes it.
            guard let caller, caller.userID == flow.userID, caller.sessionID == flow.sessionID else {
                throw LanyardError.unauthorized("Finish this flow with the session that started it")
            }
        }
        let identity = try await use(flow)
        switch intent {
        case .signin:
            if !flow.createUser {
                let owner = try await dependencies.database.read { connection in
                    try await IdentityStore(connection).find(provider: Provider.email.rawValue, providerUserID: flow.address)
                }
                guard owner != nil, flow.userID == nil || owner?.userID == flow.userID else {
                    throw LanyardError.notFound("No account signs in with this email address")
                }
            }
            return .session(try await SignIn(dependencies).signIn(identity, name: nil, guest: caller, client: client))
        case .link:
            return .linked(try await Linking(dependencies).link(identity, caller: caller!, client: client))
        case .reauthenticate:
            return .session(try await Reauthentication(dependencies).reauthenticate(identity, caller: caller!, client: client))
        }
    }
}

/// An email flow's code offered as a merge's proof.
public struct EmailProof: Sendable, Equatable {
    public var flowID: String
    public var flowSecret: String
    public var code: String

    public init(flowID: String, flowSecret: String, code: String) {
        (self.flowID, self.flowSecret, self.code) = (flowID, flowSecret, code)
    }
}
