import Hummingbird
import LanyardCore

/// Turns the bearer of a route group's requests into the caller before the handler runs, and puts it in the
/// request context (`context.requireCaller()`): without a valid bearer of an active session the answer is
/// `UNAUTHORIZED` and the handler never runs.
///
/// ```swift
/// let users = router.group("v1/users").add(middleware: BearerAuthentication(api, .required))
/// users.patch("me") { request, context in let caller = try context.requireCaller() … }
/// ```
struct BearerAuthentication: RouterMiddleware {
    typealias Context = LanyardRequestContext

    enum Mode: Sendable {
        /// A valid bearer of an active session.
        case required
        /// As `required`, with the caller's account read in the same query (`context.account`).
        case requiredReadingAccount
        /// A bearer is optional; one that is sent must be valid, and a guest's session ended by its merge still
        /// counts (sign-in's guest, so a retried sign-in lands where the first one did). A token of an account
        /// absorbed by a full merge is `ACCOUNT_MERGED` here as on every route but the merge's own.
        case optionalAllowingMergedGuest
        /// As `optionalAllowingMergedGuest`, and an account absorbed by a full merge too: the merge route answers
        /// its own merge again to the device whose answer was lost (`MergeDecision.replay`).
        case optionalAllowingMerged
    }

    let authenticator: Authenticator
    let mode: Mode

    init(_ api: APIContext, _ mode: Mode) {
        authenticator = Authenticator(api.dependencies)
        self.mode = mode
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let token = try BearerToken.parse(request)
        switch mode {
        case .required:
            guard let token else { throw LanyardError.unauthorized }
            context.caller = try await authenticator.authenticate(bearer: token)
        case .requiredReadingAccount:
            guard let token else { throw LanyardError.unauthorized }
            (context.caller, context.account) = try await authenticator.authenticateReadingAccount(bearer: token)
        case .optionalAllowingMerged:
            // An invalid bearer is refused rather than ignored: the app believes it holds a guest session.
            if let token { context.caller = try await authenticator.authenticateAllowingMerged(bearer: token) }
        case .optionalAllowingMergedGuest:
            if let token {
                let caller = try await authenticator.authenticateAllowingMerged(bearer: token)
                if caller.mergedInto != nil, case let ended = try await authenticator.endedByMerge(caller),
                   ended.code == .accountMerged {
                    throw ended
                }
                context.caller = caller
            }
        }
        return try await next(request, context)
    }
}

/// The `Authorization: Bearer …` header.
enum BearerToken {
    /// The token, or `nil` without an `Authorization` header; `UNAUTHORIZED` when the header is malformed.
    static func parse(_ request: Request) throws -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else {
            throw LanyardError.unauthorized("The Authorization header must be 'Bearer <access token>'")
        }
        // Byte-level trim: Foundation's trimmingCharacters bridges a 600-byte token through NSString.
        let bytes = Array(parts[1].utf8)
        var start = 0, end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}
