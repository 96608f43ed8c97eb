/// The error catalogue's codes (reference section 3): the server answers them in the one error shape
/// (`{"error": {"code", "message", "details", "request_id"}}`), and the SDK reads each into its typed error.
/// New codes may come with newer servers: a client keeps the raw string when `ErrorCode(rawValue:)` is nil.
///
/// ```swift
/// if ErrorCode(rawValue: body.error.code) == .refreshTokenReused { signOut() }
/// ```
public enum ErrorCode: String, Sendable, Codable, CaseIterable {
    case invalidRequest = "INVALID_REQUEST"
    case payloadTooLarge = "PAYLOAD_TOO_LARGE"
    case unsupportedProvider = "UNSUPPORTED_PROVIDER"
    case invalidProviderToken = "INVALID_PROVIDER_TOKEN"
    case providerUnavailable = "PROVIDER_UNAVAILABLE"
    case unauthorized = "UNAUTHORIZED"
    case invalidRefreshToken = "INVALID_REFRESH_TOKEN"
    case refreshTokenReused = "REFRESH_TOKEN_REUSED"
    case providerConflict = "PROVIDER_CONFLICT"
    case cannotUnlinkOnlyProvider = "CANNOT_UNLINK_ONLY_PROVIDER"
    case providerNotLinked = "PROVIDER_NOT_LINKED"
    case reauthenticationRequired = "REAUTHENTICATION_REQUIRED"
    case rateLimited = "RATE_LIMITED"
    case notFound = "NOT_FOUND"
    case forbidden = "FORBIDDEN"
    case versionConflict = "VERSION_CONFLICT"
    case accountDisabled = "ACCOUNT_DISABLED"
    case inviteUnusable = "INVITE_UNUSABLE"
    case groupLimit = "GROUP_LIMIT"
    case insufficientRole = "INSUFFICIENT_ROLE"
    case ownerMustTransfer = "OWNER_MUST_TRANSFER"
    case mergeConflict = "MERGE_CONFLICT"
    case accountMerged = "ACCOUNT_MERGED"
    case invalidCode = "INVALID_CODE"
    case emailNotConfirmed = "EMAIL_NOT_CONFIRMED"
    case invalidPasskey = "INVALID_PASSKEY"
    case invalidRedirectURI = "INVALID_REDIRECT_URI"
    case invalidGrant = "INVALID_GRANT"
    case internalError = "INTERNAL_ERROR"
    case serviceUnavailable = "SERVICE_UNAVAILABLE"

    /// The HTTP status the server answers this code with.
    public var httpStatus: Int {
        switch self {
        case .invalidRequest, .unsupportedProvider, .cannotUnlinkOnlyProvider, .invalidRedirectURI, .invalidGrant: 400
        case .unauthorized, .invalidProviderToken, .invalidRefreshToken, .refreshTokenReused,
             .reauthenticationRequired, .accountMerged, .invalidCode, .invalidPasskey: 401
        case .forbidden, .accountDisabled, .insufficientRole: 403
        case .notFound, .providerNotLinked: 404
        case .providerConflict, .groupLimit, .ownerMustTransfer, .mergeConflict, .emailNotConfirmed: 409
        case .inviteUnusable: 410
        case .versionConflict: 412
        case .payloadTooLarge: 413
        case .rateLimited: 429
        case .internalError: 500
        case .providerUnavailable, .serviceUnavailable: 503
        }
    }
}
