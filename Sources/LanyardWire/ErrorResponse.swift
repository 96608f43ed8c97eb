import Foundation

/// Every error the server answers: `{"error": {"code", "message", "details", "request_id"}}` (reference section 5).
///
/// ```swift
/// let failure = try WireCoding.decoder().decode(ErrorResponse.self, from: data)
/// if failure.error.code == "RATE_LIMITED" { print(failure.error.details?.retryAfter ?? 0) }
/// ```
public struct ErrorResponse: Sendable, Equatable, Codable {
    /// The error itself.
    public struct Body: Sendable, Equatable, Codable {
        /// The catalogue's code, such as `PROVIDER_ALREADY_LINKED`.
        public var code: String
        /// A sentence for a person.
        public var message: String
        /// The request's id, as in the server's log.
        public var requestID: String?
        /// What the code's entry says it carries.
        public var details: Details?

        enum CodingKeys: String, CodingKey {
            case code, message, details
            case requestID = "request_id"
        }
    }

    /// The members an error may carry in `details`.
    public struct Details: Sendable, Equatable, Codable {
        /// The request member that is wrong (`INVALID_REQUEST`).
        public var field: String?
        /// A reason within the code, such as `identity_in_use` or `nonce_mismatch`.
        public var reason: String?
        /// The provider concerned.
        public var provider: String?
        /// A guest's conflict that signing in would merge.
        public var mergeAvailable: Bool?
        /// Seconds to wait (`RATE_LIMITED`, `SERVICE_UNAVAILABLE`).
        public var retryAfter: Double?
        /// The record's version now (`VERSION_CONFLICT`).
        public var currentVersion: Int?
        /// The role the action needs (`INSUFFICIENT_ROLE`).
        public var required: String?
        /// The limit reached (`GROUP_LIMIT`).
        public var limit: Int?
        /// Where a merged account went (`ACCOUNT_MERGED`, `MERGE_CONFLICT` `already_merged`).
        public var mergedInto: String?
        /// The providers both accounts hold (`MERGE_CONFLICT` `provider_collision`).
        public var providers: [String]?
        /// `INVALID_CODE`: wrong codes an email flow still accepts.
        public var attemptsLeft: Int?

        enum CodingKeys: String, CodingKey {
            case field, reason, provider, required, limit, providers
            case attemptsLeft = "attempts_left"
            case mergedInto = "merged_into"
            case mergeAvailable = "merge_available", retryAfter = "retry_after", currentVersion = "current_version"
        }
    }

    /// The error.
    public var error: Body
}
