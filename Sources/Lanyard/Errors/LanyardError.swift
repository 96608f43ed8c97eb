import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything a `LanyardClient` call can fail with: one case per error code of the server's catalogue, and
/// the failures that happen before the server answers. `errorDescription` is fit to show a person.
///
/// ```swift
/// do {
///     try await client.link(.google(idToken: token))
/// } catch LanyardError.providerConflict(.identityInUse, let mergeAvailable) {
///     // that Google account has its own Lanyard account; a guest could sign in with it instead (mergeAvailable)
/// } catch let error as LanyardError {
///     showAlert(error.localizedDescription)
/// }
/// ```
public enum LanyardError: Error, Sendable, Equatable {
    /// No session is held: sign in first.
    case notSignedIn
    /// `INVALID_REQUEST`: a field the server refused, and why.
    case invalidRequest(field: String?, message: String)
    /// `PAYLOAD_TOO_LARGE`: the body (a data record, say) is over the server's limit.
    case payloadTooLarge
    /// `UNSUPPORTED_PROVIDER`: the server does not offer this provider.
    case unsupportedProvider(Provider)
    /// `INVALID_PROVIDER_TOKEN`: the ID token failed verification; `reason` is the server's, such as
    /// `expired`, `audience` or `nonce_mismatch`.
    case invalidProviderToken(reason: String)
    /// `PROVIDER_UNAVAILABLE`: the provider's keys cannot be reached right now.
    case providerUnavailable
    /// `UNAUTHORIZED`: the access token was refused even after a refresh.
    case unauthorized
    /// `INVALID_REFRESH_TOKEN`: the session ended (expired, revoked or signed out elsewhere). The client has
    /// signed out.
    case invalidRefreshToken
    /// `REFRESH_TOKEN_REUSED`: a used refresh token came back, so the server ended the session for safety. The
    /// client has signed out.
    case refreshTokenReused
    /// `PROVIDER_CONFLICT`: linking would break the rule that a provider account belongs to one account.
    /// `mergeAvailable` says a guest can sign in with it instead and keep their data.
    case providerConflict(reason: ProviderConflictReason, mergeAvailable: Bool)
    /// `CANNOT_UNLINK_ONLY_PROVIDER`: the last sign-in method cannot be removed.
    case cannotUnlinkOnlyProvider
    /// `PROVIDER_NOT_LINKED`: the account has no identity of that provider.
    case providerNotLinked(Provider?)
    /// `REAUTHENTICATION_REQUIRED`: sign in again with one of the account's providers, pass the credential to
    /// `reauthenticate(_:)`, then retry.
    case reauthenticationRequired
    /// `RATE_LIMITED`: too many attempts; try again after `retryAfter` seconds.
    case rateLimited(retryAfter: TimeInterval?)
    /// `NOT_FOUND`: no such object.
    case notFound
    /// `FORBIDDEN`: not allowed.
    case forbidden
    /// `FORBIDDEN` with reason `identity_not_on_account`: `reauthenticate(_:)` got a credential of someone else's
    /// account; the person must use one of this account's sign-in methods.
    case identityNotOnAccount
    /// `VERSION_CONFLICT`: the record changed since it was read; `currentVersion` is the server's.
    case versionConflict(currentVersion: Int?)
    /// `ACCOUNT_DISABLED`: an operator disabled the account. The client has signed out.
    case accountDisabled
    /// `ACCOUNT_DISABLED` with `reason: "other_account"`: the account a merge proved (or would keep) is disabled.
    /// The client stays signed in to its own account.
    case otherAccountDisabled
    /// `INVITE_UNUSABLE`: the invite's code expired, was revoked or was used as many times as it may
    /// (`reason`: `expired`, `revoked`, `used_up`). Ask for a new one.
    case inviteUnusable(reason: String)
    /// `GROUP_LIMIT`: the group is full (`group_full`), the account is in as many groups as it may
    /// (`too_many_groups`), or the group has as many pending invites as it may (`too_many_invites`).
    case groupLimit(reason: String, limit: Int?)
    /// `INSUFFICIENT_ROLE`: the account's role in the group is below `required`.
    case insufficientRole(required: GroupRole?)
    /// `OWNER_MUST_TRANSFER`: the owner cannot leave; transfer the group to another member first.
    case ownerMustTransfer
    /// `MERGE_CONFLICT`: the accounts cannot be merged: `same_account`, `anonymous`, `already_merged` (`mergedInto`),
    /// `provider_collision` (both hold a different account of `providers`; release one to merge), or `reverted` (an
    /// operator reverted the merge this request made; it is not answered again).
    case mergeConflict(reason: String, mergedInto: String?, providers: [String])
    /// `ACCOUNT_MERGED`: this account was merged into `into` on another device. The client has signed out.
    case accountMerged(into: User.ID)
    /// `INVALID_CODE`: an email code was wrong (`wrong_code`, with the tries left) or its flow cannot be finished
    /// (`expired`, `flow_dead`, `used`, `undeliverable`): start again.
    case invalidCode(reason: String, attemptsLeft: Int)
    /// `EMAIL_NOT_CONFIRMED`: the link in the mail was not confirmed within the wait.
    case emailNotConfirmed
    /// `INVALID_PASSKEY`: the server refused a passkey ceremony; `reason` names the check (`challenge`, `origin`,
    /// `rp_id`, `user_verification`, `signature`, `counter`, `unknown_credential`, `malformed`…).
    case invalidPasskey(reason: String)
    /// `INVALID_REDIRECT_URI`: redirect sign-in's `redirectURI` is not one the server lists.
    case invalidRedirectURI
    /// `INVALID_GRANT`: redirect sign-in's code could not be exchanged (`expired`, `used`, `verifier`,
    /// `redirect_uri`); start the sign-in again.
    case invalidGrant(reason: String)
    /// Redirect sign-in: the person declined at the provider, or closed its page (`access_denied`, Apple's
    /// `user_cancelled_authorize`). Nothing changed; stay on the sign-in screen.
    case signInCancelled
    /// `SERVICE_UNAVAILABLE`: the server cannot reach its database right now; try again after `retryAfter`.
    case serviceUnavailable(retryAfter: TimeInterval?)
    /// `INTERNAL_ERROR`, or a code this version of the SDK does not know.
    case server(status: Int, code: String, message: String)
    /// The request did not reach the server or its answer did not arrive. The session is kept.
    case network(URLError)
    /// The server answered something that is not Lanyard's API (a proxy's error page, say).
    case invalidResponse(status: Int)
}

/// Why a `PROVIDER_CONFLICT` happened.
///
/// ```swift
/// if case .providerConflict(.providerAlreadyLinked, _) = error { /* unlink the old one first */ }
/// ```
public enum ProviderConflictReason: Sendable, Equatable {
    /// That provider account is already on this account.
    case alreadyLinked
    /// This account already has another account of that provider.
    case providerAlreadyLinked
    /// That provider account belongs to another Lanyard account.
    case identityInUse
    /// A reason this version of the SDK does not know.
    case other(String)

    init(_ reason: String?) {
        switch reason {
        case "already_linked": self = .alreadyLinked
        case "provider_already_linked": self = .providerAlreadyLinked
        case "identity_in_use": self = .identityInUse
        default: self = .other(reason ?? "")
        }
    }
}

extension LanyardError: LocalizedError {
    /// A sentence to show a person.
    ///
    /// ```swift
    /// catch let error as LanyardError { alertMessage = error.errorDescription }
    /// ```
    public var errorDescription: String? {
        switch self {
        case .notSignedIn: "You're not signed in."
        case .invalidRequest(_, let message): message
        case .payloadTooLarge: "That's too large to save."
        case .unsupportedProvider(let provider): "Signing in with \(provider.displayName) isn't available."
        case .invalidProviderToken(let reason):
            reason == "expired" ? "That sign-in took too long. Please try again." : "The sign-in couldn't be verified. Please try again."
        case .providerUnavailable: "Signing in is temporarily unavailable. Please try again in a moment."
        case .unauthorized: "Please sign in again."
        case .invalidRefreshToken: "Your session has ended. Please sign in again."
        case .refreshTokenReused: "For your security you've been signed out. Please sign in again."
        case .providerConflict(.alreadyLinked, _): "That account is already linked."
        case .providerConflict(.providerAlreadyLinked, _):
            "Your account already has one of those linked. Unlink it first to switch."
        case .providerConflict: "That account is already used by a different account."
        case .cannotUnlinkOnlyProvider: "You can't remove your only way to sign in."
        case .providerNotLinked(let provider): "No \(provider?.displayName ?? "such") account is linked."
        case .reauthenticationRequired: "Please sign in again to confirm it's you."
        case .rateLimited(let retryAfter):
            retryAfter.map { "Too many attempts. Try again in \(Int($0.rounded(.up))) seconds." } ?? "Too many attempts. Try again later."
        case .notFound: "That couldn't be found."
        case .forbidden: "That isn't allowed."
        case .identityNotOnAccount: "That account isn't linked to you. Sign in with one of your account's sign-in methods."
        case .versionConflict: "This changed on another device. Reload and try again."
        case .accountDisabled: "This account has been disabled."
        case .otherAccountDisabled: "The other account has been disabled, so it can't be merged."
        case .inviteUnusable(let reason):
            switch reason {
            case "expired": "This invite has expired. Ask for a new one."
            case "revoked": "This invite was cancelled. Ask for a new one."
            default: "This invite has already been used. Ask for a new one."
            }
        case .groupLimit(let reason, _):
            switch reason {
            case "group_full": "This group is full."
            case "too_many_groups": "You're in as many groups as you can be. Leave one first."
            default: "This group has too many open invites. Cancel some first."
            }
        case .insufficientRole: "You don't have permission to do that in this group."
        case .ownerMustTransfer: "Hand the group to another member before you leave it."
        case .mergeConflict(let reason, _, _):
            switch reason {
            case "same_account": "That's the account you're signed in to."
            case "already_merged": "That account was already merged into another."
            case "provider_collision": "Both accounts use a different account of the same provider. Choose which one to let go."
            case "reverted": "That merge was undone by support. Ask them before trying again."
            default: "Sign in to an account first; a guest's data joins an account when you sign in."
            }
        case .accountMerged: "This account was merged into another. Please sign in again."
        case .invalidCode(let reason, let left):
            switch reason {
            case "wrong_code": left == 1 ? "That code isn't right. One try left." : "That code isn't right. \(left) tries left."
            case "expired": "That code has expired. Ask for a new one."
            case "undeliverable": "We couldn't deliver the mail. Check the address and try again."
            default: "That code can't be used any more. Ask for a new one."
            }
        case .emailNotConfirmed: "Open the link in the mail we sent, then come back."
        case .invalidPasskey(let reason):
            switch reason {
            case "unknown_credential": "This passkey is no longer on any account. Sign in another way."
            case "challenge": "That took too long. Try again."
            case "counter": "This passkey looks copied. Sign in another way and remove it."
            default: "That passkey couldn't be used. Try again."
            }
        case .invalidRedirectURI: "This app's sign-in page is not set up on the server."
        case .invalidGrant: "That sign-in didn't finish. Please try again."
        case .signInCancelled: "The sign-in was cancelled."
        case .serviceUnavailable: "The service is temporarily unavailable. Please try again in a moment."
        case .server: "Something went wrong on our side. Please try again."
        case .network: "You appear to be offline. Check your connection and try again."
        case .invalidResponse: "The server sent an unexpected answer. Please try again."
        }
    }
}

extension LanyardError {
    /// The error an answer of the server stands for; `nil` for a 2xx.
    static func decode(status: Int, body: Data, headers: [AnyHashable: Any]) -> LanyardError? {
        guard !(200..<300).contains(status) else { return nil }
        guard let payload = try? JSONDecoder().decode(ErrorResponse.self, from: body) else {
            return .invalidResponse(status: status)
        }
        let error = payload.error
        let retryAfter = Self.retryAfter(headers) ?? error.details?.retryAfter
        guard let code = ErrorCode(rawValue: error.code) else {
            return .server(status: status, code: error.code, message: error.message)
        }
        switch code {
        case .invalidRequest: return .invalidRequest(field: error.details?.field, message: error.message)
        case .payloadTooLarge: return .payloadTooLarge
        case .unsupportedProvider: return .unsupportedProvider(Provider(rawValue: error.details?.provider ?? ""))
        case .invalidProviderToken: return .invalidProviderToken(reason: error.details?.reason ?? "")
        case .providerUnavailable: return .providerUnavailable
        case .unauthorized: return .unauthorized
        case .invalidRefreshToken: return .invalidRefreshToken
        case .refreshTokenReused: return .refreshTokenReused
        case .providerConflict:
            return .providerConflict(reason: ProviderConflictReason(error.details?.reason),
                                     mergeAvailable: error.details?.mergeAvailable ?? false)
        case .cannotUnlinkOnlyProvider: return .cannotUnlinkOnlyProvider
        case .providerNotLinked: return .providerNotLinked(error.details?.provider.map(Provider.init(rawValue:)))
        case .reauthenticationRequired: return .reauthenticationRequired
        case .rateLimited: return .rateLimited(retryAfter: retryAfter)
        case .notFound: return .notFound
        case .forbidden: return error.details?.reason == "identity_not_on_account" ? .identityNotOnAccount : .forbidden
        case .versionConflict: return .versionConflict(currentVersion: error.details?.currentVersion)
        case .accountDisabled: return error.details?.reason == "other_account" ? .otherAccountDisabled : .accountDisabled
        case .serviceUnavailable: return .serviceUnavailable(retryAfter: retryAfter)
        case .inviteUnusable: return .inviteUnusable(reason: error.details?.reason ?? "")
        case .groupLimit: return .groupLimit(reason: error.details?.reason ?? "", limit: error.details?.limit)
        case .insufficientRole: return .insufficientRole(required: error.details?.required.flatMap(GroupRole.init(rawValue:)))
        case .ownerMustTransfer: return .ownerMustTransfer
        case .mergeConflict:
            return .mergeConflict(reason: error.details?.reason ?? "", mergedInto: error.details?.mergedInto,
                                  providers: error.details?.providers ?? [])
        case .accountMerged: return .accountMerged(into: User.ID(error.details?.mergedInto ?? ""))
        case .invalidCode: return .invalidCode(reason: error.details?.reason ?? "", attemptsLeft: error.details?.attemptsLeft ?? 0)
        case .emailNotConfirmed: return .emailNotConfirmed
        case .invalidPasskey: return .invalidPasskey(reason: error.details?.reason ?? "")
        case .invalidRedirectURI: return .invalidRedirectURI
        case .invalidGrant: return .invalidGrant(reason: error.details?.reason ?? "")
        case .internalError: return .server(status: status, code: error.code, message: error.message)
        }
    }

    private static func retryAfter(_ headers: [AnyHashable: Any]) -> TimeInterval? {
        let value = headers.first { ($0.key as? String)?.lowercased() == "retry-after" }?.value as? String
        return value.flatMap { TimeInterval($0.trimmingCharacters(in: .whitespaces)) }
    }
}
