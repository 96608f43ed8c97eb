import Foundation

extension LanyardClient {
    /// Sign-in by a code or a link in one mail, and an email address as a sign-in method (reference section 18).
    ///
    /// ```swift
    /// let flow = try await client.email.start("ada@example.com")
    /// matchLabel.text = "In the mail, pick \(flow.match)"
    /// let result = try await flow.verify(code: typedCode)
    /// ```
    public nonisolated var email: EmailAuth { EmailAuth(client: self) }
}

/// The email identity's calls: `start` a flow (a mail with a 6-digit code and a link), then finish it on this
/// device with the code (`EmailFlow.verify(code:)`) or once the link was confirmed on any device
/// (`EmailFlow.awaitConfirmation()`). The session only ever comes to the device that started the flow.
///
/// ```swift
/// let flow = try await client.email.start("ada@example.com")
/// let result = try await flow.awaitConfirmation()
/// ```
public struct EmailAuth: Sendable {
    let client: LanyardClient

    /// Sends a sign-in mail (a guest's session upgrades, or merges into the address's account, when it finishes).
    /// The answer is the same whether or not the address has an account.
    ///
    /// ```swift
    /// let flow = try await client.email.start("ada@example.com", redirectTo: "myapp://signed-in")
    /// ```
    public func start(_ address: String, redirectTo: String? = nil) async throws -> EmailFlow {
        try await client.startEmailFlow(EmailStartRequest(email: address, intent: .signin, redirectTo: redirectTo))
    }

    /// Sends a mail that adds `address` to the signed-in account as a sign-in method (and a way back in if the
    /// person loses their Apple ID), once its code is verified.
    ///
    /// ```swift
    /// let flow = try await client.email.link(email: "ada@example.com")
    /// try await flow.verify(code: typedCode)
    /// ```
    public func link(email address: String) async throws -> EmailFlow {
        try await client.startEmailFlow(EmailStartRequest(email: address, intent: .link))
    }

    /// Sends a mail that proves the person still holds the account's email address (before unlinking or
    /// deleting, when the last sign-in is old).
    ///
    /// ```swift
    /// let flow = try await client.email.reauthenticate(email: "ada@example.com")
    /// try await flow.verify(code: typedCode)
    /// ```
    public func reauthenticate(email address: String) async throws -> EmailFlow {
        try await client.startEmailFlow(EmailStartRequest(email: address, intent: .reauthenticate))
    }
}

/// One mail's flow, held by the device that started it. Show `match`: the page the mail's link opens asks the
/// person to pick it, so a stranger's request cannot be confirmed blind.
///
/// ```swift
/// let flow = try await client.email.start("ada@example.com")
/// let result = try await flow.verify(code: "123456")
/// ```
public struct EmailFlow: Sendable {
    let client: LanyardClient
    /// What the server answered `start`: the flow's id and secret, the match number, its lifetime.
    public let started: EmailFlowStarted
    /// What finishing the flow does: sign in (`.signin`), add the address, or re-authenticate.
    public let intent: EmailIntent

    /// The number to show on this device.
    public var match: Int { started.match }

    /// Finishes with the 6-digit code from the mail. A wrong code throws `.invalidCode(reason: "wrong_code",
    /// attemptsLeft:)`; after five the flow is dead.
    ///
    /// ```swift
    /// do { try await flow.verify(code: typed) } catch LanyardError.invalidCode(_, let left) { showTriesLeft(left) }
    /// ```
    @discardableResult
    public func verify(code: String) async throws -> SignInResult {
        let body = EmailVerifyRequest(flowID: started.flowID, flowSecret: started.flowSecret, code: code)
        return try await client.finishEmailFlow(try APIRequest("POST", "v1/auth/email/verify", json: body), intent: intent)
    }

    /// Waits until the link in the mail was confirmed (on this device or any other), then finishes here. Throws
    /// `.emailNotConfirmed` when `timeout` passes first.
    ///
    /// ```swift
    /// let result = try await flow.awaitConfirmation(timeout: 600)
    /// ```
    @discardableResult
    public func awaitConfirmation(timeout: TimeInterval = 900) async throws -> SignInResult {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let wait = Int(min(25, max(0, deadline.timeIntervalSinceNow)))
            let body = EmailCompleteRequest(flowID: started.flowID, flowSecret: started.flowSecret, wait: wait)
            do {
                return try await client.finishEmailFlow(try APIRequest("POST", "v1/auth/email/complete", json: body),
                                                        intent: intent)
            } catch LanyardError.emailNotConfirmed where Date() < deadline {
                continue
            }
        }
    }
}

extension LanyardClient {
    func startEmailFlow(_ body: EmailStartRequest) async throws -> EmailFlow {
        let request = try APIRequest("POST", "v1/auth/email/start", json: body)
        let started: EmailFlowStarted
        if body.intent == .signin || body.intent == nil {
            // A guest's bearer goes along at the finish, not here: starting needs no account.
            started = try await transport.send(request, bearer: nil, as: EmailFlowStarted.self)
        } else {
            started = try await sendAuthorized(request, as: EmailFlowStarted.self)
        }
        return EmailFlow(client: self, started: started, intent: body.intent ?? .signin)
    }

    /// Sends `verify` or `complete` with the bearer the intent needs, and adopts what it answers.
    func finishEmailFlow(_ request: APIRequest, intent: EmailIntent) async throws -> SignInResult {
        switch intent {
        case .signin:
            let payload: SessionResponse
            if let guest = session, guest.user.isAnonymous, let bearer = try? await accessToken() {
                payload = try await sendAuthorized(request, firstBearer: bearer, as: SessionResponse.self)
            } else {
                payload = try await transport.send(request, bearer: nil, as: SessionResponse.self)
            }
            return adopt(payload)
        case .link:
            let payload = try await sendAuthorized(request, as: LinkResponse.self)
            let user = if let user = payload.user { user } else { try await fetchUser() }
            update(user: user, [.linked(.email)])
            return SignInResult(user: user, isNewUser: false, mergedFrom: nil)
        case .reauthenticate:
            let payload = try await sendAuthorized(request, as: SessionResponse.self)
            hold(StoredSession(payload, receivedAt: options.now()), [.tokenRefreshed, .userUpdated(payload.user)])
            return SignInResult(user: payload.user, isNewUser: false, mergedFrom: nil)
        }
    }
}
