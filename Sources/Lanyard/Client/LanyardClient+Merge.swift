import Foundation

/// Which account survives a merge: the signed-in one (`current`) or the one the person just proved (`other`).
///
/// ```swift
/// try await client.merge(proving: signInToOther, keep: .other)
/// ```
public enum MergeKeep: String, Sendable, Codable {
    case current, other
}

/// Whose record wins where both accounts have one with the same collection and id.
///
/// ```swift
/// try await client.merge(proving: signInToOther, onConflict: .current)
/// ```
public enum MergeConflictRule: String, Sendable, Codable {
    /// The one written last.
    case newer
    /// The signed-in account's.
    case current
    /// The proved account's.
    case other
}

/// What a merge did (or, with `dryRun`, would do).
///
/// ```swift
/// let result = try await client.merge(proving: signInToOther, dryRun: true)
/// confirmText = "\(result.recordsMoved) items will move; \(result.conflicts.count) were edited on both"
/// ```
public struct MergeResult: Sendable, Decodable, Equatable {
    /// A record both accounts had, and whose version won (`current` or `other`).
    public struct Conflict: Sendable, Decodable, Equatable {
        public var collection: String
        public var id: String
        public var winner: String
    }

    /// The merge's id (nil for a dry run).
    public var mergeID: String?
    /// The account that remains.
    public var into: String
    /// The account merged into it.
    public var from: String
    /// Providers whose sign-in moved to the account that remains.
    public var identitiesMoved: [String]
    /// Providers let go (`release`).
    public var identitiesReleased: [String]
    /// How many records moved.
    public var recordsMoved: Int
    /// Records both had.
    public var conflicts: [Conflict]
    /// Groups whose memberships moved.
    public var groups: [String]
    /// Whether nothing was changed.
    public var dryRun: Bool

    enum CodingKeys: String, CodingKey {
        case into, from, conflicts, groups
        case mergeID = "merge_id", identitiesMoved = "identities_moved", identitiesReleased = "identities_released"
        case recordsMoved = "records_moved", dryRun = "dry_run"
    }
}

struct MergeResponse: Decodable, Sendable {
    var result: MergeResult
    var session: SessionResponse?

    init(from decoder: any Decoder) throws {
        result = try MergeResult(from: decoder)
        session = try decoder.container(keyedBy: Keys.self).decodeIfPresent(SessionResponse.self, forKey: .session)
    }

    enum Keys: String, CodingKey { case session }
}

struct MergeRequestBody: Encodable, Sendable {
    struct Proof: Encodable, Sendable {
        var provider: String
        var idToken: String
        enum CodingKeys: String, CodingKey { case provider, idToken = "id_token" }
    }

    var proof: Proof
    var keep: MergeKeep
    var onConflict: MergeConflictRule
    var release: [String]
    var dryRun: Bool

    enum CodingKeys: String, CodingKey {
        case proof, keep, release, onConflict = "on_conflict", dryRun = "dry_run"
    }
}

struct MergeChallengeBody: Decodable, Sendable {
    var nonce: String
}

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
    /// list it in `release` to let the merged account's one go), `.notFound` (nobody has that provider account:
    /// link it instead), `.reauthenticationRequired`.
    @discardableResult
    public func merge(proving signIn: @Sendable (_ nonce: String) async throws -> ProviderCredential,
                      keep: MergeKeep = .current, onConflict: MergeConflictRule = .newer, release: [Provider] = [],
                      dryRun: Bool = false) async throws -> MergeResult {
        let challenge = try await sendAuthorized(APIRequest("POST", "v1/users/me/merge/challenge"),
                                                 as: MergeChallengeBody.self)
        let credential = try await signIn(challenge.nonce)
        let body = MergeRequestBody(proof: .init(provider: credential.provider.rawValue, idToken: credential.idToken),
                                    keep: keep, onConflict: onConflict, release: release.map(\.rawValue), dryRun: dryRun)
        let request = try APIRequest("POST", "v1/users/me/merge", json: body,
                                     headers: ["Idempotency-Key": UUID().uuidString])
        let answer: MergeResponse
        do {
            answer = try await sendAuthorized(request, as: MergeResponse.self)
        } catch LanyardError.network {
            // The answer was lost: the same key answers the same merge, and moves nothing twice.
            answer = try await sendAuthorized(request, as: MergeResponse.self)
        }
        if let session = answer.session { _ = adopt(session) }
        return answer.result
    }
}
