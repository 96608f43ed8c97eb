import HTTPTypes
import Hummingbird
import LanyardCore

/// An error as GoTrue answers it (its API version 2024-01-01): string `code` and `error_code`, `msg` and
/// `message`, so Supabase's clients put the code on their own error types. Lanyard's catalogue maps to GoTrue's
/// names where GoTrue has one for the same situation, and to Lanyard's own (lower-cased) otherwise.
struct GoTrueError: Error, Equatable {
    let status: Int
    let code: String
    let message: String
    var retryAfter: Int?

    init(status: Int, code: String, message: String, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    /// The GoTrue error for a Lanyard one. `UNAUTHORIZED` is `no_authorization` without an `Authorization`
    /// header, `session_not_found` for a token whose session ended, and `bad_jwt` otherwise, as in GoTrue.
    static func from(_ error: LanyardError, hadAuthorization: Bool) -> GoTrueError {
        let message = error.message
        switch error.code {
        case .invalidRequest: return GoTrueError(status: 400, code: "validation_failed", message: message)
        case .payloadTooLarge: return GoTrueError(status: 413, code: "request_too_large", message: message)
        case .unsupportedProvider: return GoTrueError(status: 400, code: "provider_disabled", message: message)
        case .invalidProviderToken:
            let reason = error.details["reason"]?.stringValue.map { " (\($0))" } ?? ""
            return GoTrueError(status: 400, code: "bad_id_token", message: message + reason)
        case .providerUnavailable: return GoTrueError(status: 503, code: "provider_unavailable", message: message)
        case .unauthorized:
            guard hadAuthorization else {
                return GoTrueError(status: 401, code: "no_authorization", message: "This endpoint requires a bearer token")
            }
            // Supabase's clients sign out on this code only: a device signed out elsewhere must hear it.
            if error.details["reason"]?.stringValue == "session_ended" {
                return GoTrueError(status: 403, code: "session_not_found",
                                   message: "Session from session_id claim in JWT does not exist")
            }
            return GoTrueError(status: 403, code: "bad_jwt", message: message)
        case .invalidRefreshToken:
            return GoTrueError(status: 400, code: "refresh_token_not_found", message: "Invalid Refresh Token: Refresh Token Not Found")
        case .refreshTokenReused:
            return GoTrueError(status: 400, code: "refresh_token_already_used", message: "Invalid Refresh Token: Already Used")
        case .providerConflict:
            let code = error.details["reason"]?.stringValue == "provider_already_linked"
                ? "provider_already_linked" : "identity_already_exists"
            return GoTrueError(status: 422, code: code, message: message)
        case .cannotUnlinkOnlyProvider:
            return GoTrueError(status: 422, code: "single_identity_not_deletable", message: message)
        case .providerNotLinked: return GoTrueError(status: 404, code: "identity_not_found", message: message)
        case .reauthenticationRequired: return GoTrueError(status: 401, code: "reauthentication_needed", message: message)
        case .rateLimited:
            return GoTrueError(status: 429, code: "over_request_rate_limit", message: message, retryAfter: error.retryAfter)
        case .notFound: return GoTrueError(status: 404, code: "not_found", message: message)
        case .forbidden: return GoTrueError(status: 403, code: "forbidden", message: message)
        case .versionConflict: return GoTrueError(status: 412, code: "version_conflict", message: message)
        case .accountDisabled: return GoTrueError(status: 403, code: "user_banned", message: message)
        // Groups are not part of GoTrue's API; these never arise on `/auth/v1`, but map to their own status.
        // A token of an account merged into another: Supabase's clients sign out on `session_not_found`.
        case .accountMerged:
            return GoTrueError(status: 403, code: "session_not_found", message: message)
        case .inviteUnusable, .groupLimit, .insufficientRole, .ownerMustTransfer, .mergeConflict, .invalidPasskey:
            return GoTrueError(status: error.httpStatus, code: error.code.rawValue.lowercased(), message: message)
        // GoTrue's answer to any code it will not accept (wrong, expired, used).
        case .invalidCode: return GoTrueError(status: 403, code: "otp_expired", message: "Token has expired or is invalid")
        case .emailNotConfirmed: return GoTrueError(status: 400, code: "email_not_confirmed", message: message)
        case .invalidRedirectURI: return GoTrueError(status: 400, code: "validation_failed", message: message)
        // GoTrue's names for a PKCE exchange that cannot go on.
        case .invalidGrant:
            let code = switch error.details["reason"]?.stringValue {
            case "verifier": "bad_code_verifier"
            case "used": "flow_state_not_found"
            case "redirect_uri": "validation_failed"
            default: "flow_state_expired"
            }
            return GoTrueError(status: 400, code: code, message: message)
        case .internalError: return GoTrueError(status: 500, code: "unexpected_failure", message: message)
        case .serviceUnavailable:
            return GoTrueError(status: 503, code: "service_unavailable", message: message, retryAfter: error.retryAfter)
        }
    }

    /// A part of GoTrue's API that Lanyard does not serve, named so the developer knows why.
    static func unsupported(method: String, path: String) -> GoTrueError {
        let feature: String
        switch path.split(separator: "/").dropFirst(2).first.map(String.init) ?? "" {
        case "magiclink", "recover", "resend", "reauthenticate", "invite":
            feature = "Passwords, magic links and phone sign-in (email codes are /auth/v1/otp and /auth/v1/verify)"
        case "factors": feature = "Multi-factor authentication"
        case "sso", "saml": feature = "SSO"
        case "admin": feature = "GoTrue's admin API"
        default: feature = "\(method) \(path)"
        }
        return GoTrueError(status: 501, code: "feature_not_supported",
                           message: "\(feature) is not supported by Lanyard; sign in with Apple, Google or anonymously")
    }

    static let emailDisabled = GoTrueError(status: 422, code: "email_provider_disabled",
                                           message: "Email and password sign-ups are not supported by Lanyard; send a code with /auth/v1/otp, or sign in with Apple or Google")
    static let phoneDisabled = GoTrueError(status: 422, code: "phone_provider_disabled",
                                           message: "Phone sign-ups are not supported by Lanyard; sign in with Apple or Google")
    static let invalidAPIKey = GoTrueError(status: 401, code: "invalid_api_key", message: "Invalid API key")

    static func unsupportedGrant(_ grant: String) -> GoTrueError {
        GoTrueError(status: 400, code: "unsupported_grant_type",
                    message: "grant_type \(grant.isEmpty ? "(none)" : grant) is not supported; use id_token, pkce or refresh_token")
    }

    struct Body: Encodable {
        let code: String
        let errorCode: String
        let msg: String
        let message: String

        enum CodingKeys: String, CodingKey {
            case code, msg, message
            case errorCode = "error_code"
        }
    }

    func response(apiVersion: String) -> Response {
        var headers: HTTPFields = [.supabaseAPIVersion: apiVersion]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return (try? JSONResponse.make(Body(code: code, errorCode: code, msg: message, message: message),
                                       status: HTTPResponse.Status(code: status), headers: headers))
            ?? Response(status: .internalServerError)
    }
}

extension HTTPField.Name {
    static let supabaseAPIVersion = Self("X-Supabase-Api-Version")!
    static let apiKey = Self("apikey")!
}
