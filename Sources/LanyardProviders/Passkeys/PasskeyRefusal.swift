/// Why a passkey ceremony was refused: each is a distinct `details.reason` of `INVALID_PASSKEY` (reference
/// section 19).
public struct PasskeyRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable, CaseIterable {
        /// Unknown, used or expired.
        case challenge
        case type
        case origin
        case rpID = "rp_id"
        case userPresence = "user_presence"
        case userVerification = "user_verification"
        case signature
        case algorithm
        /// A non-zero counter that did not increase: a possible cloned authenticator.
        case counter
        case unknownCredential = "unknown_credential"
        case malformed
    }

    public let reason: Reason
    public let message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { "\(reason.rawValue): \(message)" }
}
