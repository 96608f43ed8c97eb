import LanyardSupport
import enum LanyardWire.ErrorCode

/// The one error catalogue (reference section 3): every failure a client can see, with its stable code,
/// HTTP status and a message a person can read. Handlers throw it; one middleware renders it.
public struct LanyardError: Error, Sendable, CustomStringConvertible {
    /// The catalogue's codes: one type for the server, the SDK and the wire (`LanyardWire.ErrorCode`).
    public typealias Code = ErrorCode

    public let code: Code
    public let message: String
    public var details: [String: JSONValue]
    /// Seconds, for `Retry-After` on `RATE_LIMITED` and `SERVICE_UNAVAILABLE`.
    public var retryAfter: Int?
    /// A status other than the code's own, where the contract names one (`422 INVALID_REQUEST` for an
    /// `Idempotency-Key` sent again with another body).
    public var statusOverride: Int?

    /// The HTTP status this error is answered with.
    public var httpStatus: Int { statusOverride ?? code.httpStatus }

    public init(_ code: Code, _ message: String, details: [String: JSONValue] = [:], retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.details = details
        self.retryAfter = retryAfter
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

// The catalogue's entries, by name, so a rule reads as what it means.
extension LanyardError {
    public static func invalidRequest(field: String, _ message: String) -> LanyardError {
        LanyardError(.invalidRequest, message, details: ["field": .string(field)])
    }

    public static func malformedJSON(_ message: String = "The request body is not valid JSON") -> LanyardError {
        LanyardError(.invalidRequest, message, details: ["field": .string("body")])
    }

    public static func payloadTooLarge(limit: Int) -> LanyardError {
        LanyardError(.payloadTooLarge, "The request body is larger than \(limit / 1024) KiB",
                     details: ["limit_bytes": .number(Double(limit))])
    }

    public static func unsupportedProvider(_ name: String) -> LanyardError {
        LanyardError(.unsupportedProvider, "Sign-in with \(name) is not available",
                     details: ["provider": .string(name)])
    }

    public static func invalidProviderToken(reason: String) -> LanyardError {
        let message = switch reason {
        case "expired": "The sign-in token has expired; sign in again"
        case "nonce_missing", "nonce_mismatch": "The sign-in token does not match this request's nonce"
        case "audience": "The sign-in token was issued for a different app"
        default: "The sign-in token could not be verified"
        }
        return LanyardError(.invalidProviderToken, message, details: ["reason": .string(reason)])
    }

    public static func providerUnavailable(_ provider: String?) -> LanyardError {
        LanyardError(.providerUnavailable, "Sign-in with \(provider ?? "this provider") is temporarily unavailable")
    }

    public static let unauthorized = LanyardError(.unauthorized, "Sign in to continue")

    public static func unauthorized(_ message: String) -> LanyardError {
        LanyardError(.unauthorized, message)
    }

    /// A well-signed token whose session is over (signed out, revoked, ended by a merge): `details.reason`
    /// `session_ended` tells it from a malformed or expired token, as GoTrue's `session_not_found` does.
    public static let sessionEnded = LanyardError(.unauthorized, "This session has ended",
                                                  details: ["reason": "session_ended"])

    /// A feed cursor this server never issued (reference section 13): the app reads the feed again from the beginning.
    public static let resyncRequired = LanyardError(
        .invalidRequest, "This cursor is not one the change feed issued; read the feed again from the beginning",
        details: ["field": "since", "reason": "resync_required"])

    public static let invalidRefreshToken = LanyardError(.invalidRefreshToken, "The session has ended; sign in again")

    public static let refreshTokenReused = LanyardError(
        .refreshTokenReused, "This refresh token was already used; the session has been signed out for safety")

    public static func alreadyLinked(_ provider: String) -> LanyardError {
        LanyardError(.providerConflict, "This \(provider) account is already linked to your account",
                     details: ["reason": "already_linked"])
    }

    public static func providerAlreadyLinked(_ provider: String) -> LanyardError {
        LanyardError(.providerConflict,
                     "Your account already has a \(provider) account linked; unlink it first to switch",
                     details: ["reason": "provider_already_linked"])
    }

    public static func identityInUse(_ provider: String, mergeAvailable: Bool) -> LanyardError {
        var details: [String: JSONValue] = ["reason": "identity_in_use"]
        if mergeAvailable { details["merge_available"] = .bool(true) }
        return LanyardError(.providerConflict, "This \(provider) account is already linked to a different account",
                            details: details)
    }

    public static let cannotUnlinkOnlyProvider = LanyardError(
        .cannotUnlinkOnlyProvider, "Cannot unlink your only authentication method")

    public static func providerNotLinked(_ provider: String) -> LanyardError {
        LanyardError(.providerNotLinked, "No \(provider) account is linked to your account",
                     details: ["provider": .string(provider.lowercased())])
    }

    public static let reauthenticationRequired = LanyardError(
        .reauthenticationRequired, "Sign in again to confirm it's you")

    public static func rateLimited(retryAfter: Int) -> LanyardError {
        LanyardError(.rateLimited, "Too many attempts; try again in \(retryAfter) seconds",
                     details: ["retry_after": .number(Double(retryAfter))], retryAfter: retryAfter)
    }

    public static func notFound(_ message: String = "Not found") -> LanyardError {
        LanyardError(.notFound, message)
    }

    public static let forbidden = LanyardError(.forbidden, "Not allowed")

    /// Re-authentication with an identity that is not one of this account's.
    public static func identityNotOnAccount(_ provider: String, accountHasProvider: Bool) -> LanyardError {
        let message = accountHasProvider
            ? "This \(provider) account is not the one linked to your account; sign in with that one"
            : "This \(provider) account is not one of your account's sign-in methods; use one of those"
        return LanyardError(.forbidden, message,
                            details: ["reason": "identity_not_on_account", "provider": .string(provider.lowercased())])
    }

    /// An email flow's code was wrong, or the flow cannot be finished (reference section 18): `reason` is
    /// `wrong_code` (with `attempts_left`), `expired`, `flow_dead` (five wrong codes), `used` or `undeliverable`.
    public static func invalidCode(reason: String, attemptsLeft: Int) -> LanyardError {
        let message = switch reason {
        case "wrong_code": attemptsLeft == 1 ? "That code is not right; one try left" : "That code is not right; \(attemptsLeft) tries left"
        case "expired": "That code has expired; ask for a new one"
        case "flow_dead": "Too many wrong codes; ask for a new one"
        case "used": "That code was already used; ask for a new one"
        case "undeliverable": "The mail could not be delivered; check the address and ask for a new one"
        default: "That code is not valid; ask for a new one"
        }
        return LanyardError(.invalidCode, message, details: ["reason": .string(reason),
                                                             "attempts_left": .number(Double(attemptsLeft))])
    }

    /// A passkey ceremony was refused (reference section 19); `reason` says which check failed.
    public static func invalidPasskey(_ reason: String, _ message: String) -> LanyardError {
        LanyardError(.invalidPasskey, message, details: ["reason": .string(reason)])
    }

    /// Redirect sign-in (reference section 23): a `redirect_uri` not listed in `LANYARD_REDIRECT_URIS`, named.
    public static func invalidRedirectURI(_ uri: String) -> LanyardError {
        LanyardError(.invalidRedirectURI, "redirect_uri \(uri.prefix(300)) is not one of LANYARD_REDIRECT_URIS",
                     details: ["redirect_uri": .string(String(uri.prefix(300)))])
    }

    /// Redirect sign-in's code cannot be exchanged: `reason` is `expired` (or unknown), `used`, `verifier` or
    /// `redirect_uri`. A code presented once is spent, whatever the outcome.
    public static func invalidGrant(_ reason: String) -> LanyardError {
        let message = switch reason {
        case "used": "This code was already exchanged"
        case "verifier": "code_verifier does not match the flow's code_challenge"
        case "redirect_uri": "redirect_uri is not the one the flow was started with"
        case "session": "Only the session that started this link can finish it; start it again from that session"
        default: "This code is unknown or has expired"
        }
        return LanyardError(.invalidGrant, message, details: ["reason": .string(reason)])
    }

    /// `complete` before the link in the mail was confirmed.
    public static let emailNotConfirmed = LanyardError(
        .emailNotConfirmed, "The link in the mail has not been confirmed yet", details: ["reason": "pending"])

    public static let accountDisabled = LanyardError(.accountDisabled, "This account has been disabled")

    public static let internalError = LanyardError(.internalError, "Something went wrong on our side")

    /// The database could not be reached in time (reference section 8); the request changed nothing.
    public static let serviceUnavailable = LanyardError(.serviceUnavailable,
                                                        "The service is temporarily unavailable; nothing was changed. Try again shortly",
                                                        retryAfter: 2)
}
