import Foundation

extension LanyardClient {
    /// Merges another account of the same person into this one (or this one into it, with `keep: .other`), with
    /// proof of both: the client asks the server for a single-use nonce, `proving` signs in to the other account
    /// with it (the provider's sheet), and the server moves that account's sign-in methods, records and groups in one
    /// transaction. Kept the other account: this client adopts its session. The merged account's other devices
    /// are signed out with `.accountMerged(into:)`.
    ///
    /// ```swift
    /// let result = try await client.merge(proving: { nonce in
    ///     let token = try await googleSignIn(nonce: nonce)      // the other account
    ///     return .google(idToken: token, nonce: nonce)
    /// }, keep: .current)
    /// print(result.recordsMoved, result.conflicts)
    /// ```
    ///
    /// Apple's sheet takes the nonce's SHA-256 (`AppleNonce(raw:)`'s `hashed`); pass the raw nonce as `rawNonce`.
    /// Throws `.mergeConflict` (the same account, a guest, or both with a different account of one provider:
    /// list it in `release` to let the merged account's one go), `.otherAccountDisabled`, `.groupLimit` (the account
    /// would be in too many groups), `.notFound` (nobody has that provider account: link it instead),
    /// `.reauthenticationRequired`.
    @discardableResult
    public func merge(proving signIn: @Sendable (_ nonce: String) async throws -> ProviderCredential,
                      keep: MergeKeep = .current, onConflict: MergeConflictRule = .newer, release: [Provider] = [],
                      dryRun: Bool = false) async throws -> MergeResult {
        let challenge = try await sendAuthorized(APIRequest("POST", "v1/users/me/merge/challenge"),
                                                 as: MergeChallenge.self)
        let credential = try await signIn(challenge.nonce)
        return try await merge(MergeBody(proof: .init(provider: credential.provider.rawValue, idToken: credential.idToken),
                                         keep: keep, onConflict: onConflict, release: release.map(\.rawValue), dryRun: dryRun))
    }

    /// Merges the account an email address signs in to, proven by the code of a flow this device started with
    /// `client.email.start(_:)` (no nonce: the code is single-use and bound to this device's flow).
    ///
    /// ```swift
    /// let flow = try await client.email.start("ada@work.example")
    /// let result = try await client.merge(provingEmail: flow, code: typedCode, keep: .current)
    /// ```
    @discardableResult
    public func merge(provingEmail flow: EmailFlow, code: String, keep: MergeKeep = .current,
                      onConflict: MergeConflictRule = .newer, release: [Provider] = [],
                      dryRun: Bool = false) async throws -> MergeResult {
        try await merge(MergeBody(proof: .init(emailFlow: flow.started, code: code), keep: keep, onConflict: onConflict,
                                  release: release.map(\.rawValue), dryRun: dryRun))
    }

    /// Merges the account one of the person's passkeys signs in to, proven by an assertion the authenticator makes
    /// now (single use: a dry run spends it too).
    ///
    /// ```swift
    /// let result = try await client.merge(provingPasskeyWith: authenticator, keep: .current)
    /// ```
    @discardableResult
    public func merge(provingPasskeyWith authenticator: some PasskeyAuthenticator, keep: MergeKeep = .current,
                      onConflict: MergeConflictRule = .newer, release: [Provider] = [],
                      dryRun: Bool = false) async throws -> MergeResult {
        let assertion = try await authenticator.get(try await passkeys.signInOptions())
        return try await merge(MergeBody(proof: .init(passkey: assertion), keep: keep, onConflict: onConflict,
                                         release: release.map(\.rawValue), dryRun: dryRun))
    }

    private func merge(_ body: MergeBody) async throws -> MergeResult {
        let request = try APIRequest("POST", "v1/users/me/merge", json: body,
                                     headers: ["Idempotency-Key": UUID().uuidString])
        var answer: MergeResult
        do {
            answer = try await sendAuthorized(request, as: MergeResult.self)
        } catch LanyardError.network {
            // The answer was lost: the same key answers the same merge, and moves nothing twice.
            answer = try await sendAuthorized(request, as: MergeResult.self)
        }
        if let session = answer.session { _ = adopt(session) }
        answer.session = nil
        return answer
    }
}
