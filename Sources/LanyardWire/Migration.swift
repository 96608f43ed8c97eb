import Foundation

// Switching day (reference section 24): the bridge's requests, and what an import reports.

/// The systems whose signed-in sessions the bridge takes (`POST /v1/auth/migrate/{source}`).
///
/// ```swift
/// let source = LegacySource.firebase
/// print(source.tokenField) // id_token
/// ```
public enum LegacySource: String, Sendable, Codable, CaseIterable {
    case firebase, supabase, clerk

    /// The body member the source's token travels in: Firebase's ID token, Supabase's access token, Clerk's session
    /// token.
    public var tokenField: String {
        switch self {
        case .firebase: "id_token"
        case .supabase: "access_token"
        case .clerk: "session_token"
        }
    }
}

/// `POST /v1/auth/migrate/firebase`: the signed-in user's current Firebase ID token (`getIdToken()`).
public struct FirebaseMigrationRequest: Sendable, Equatable, Codable {
    public var idToken: String

    public init(idToken: String) {
        self.idToken = idToken
    }

    enum CodingKeys: String, CodingKey { case idToken = "id_token" }
}

/// `POST /v1/auth/migrate/supabase`: the signed-in user's current Supabase access token.
public struct SupabaseMigrationRequest: Sendable, Equatable, Codable {
    public var accessToken: String

    public init(accessToken: String) {
        self.accessToken = accessToken
    }

    enum CodingKeys: String, CodingKey { case accessToken = "access_token" }
}

/// `POST /v1/auth/migrate/clerk`: the signed-in user's current Clerk session token (`session.getToken()`).
public struct ClerkMigrationRequest: Sendable, Equatable, Codable {
    public var sessionToken: String

    public init(sessionToken: String) {
        self.sessionToken = sessionToken
    }

    enum CodingKeys: String, CodingKey { case sessionToken = "session_token" }
}

/// One thing an import did not take as it was: a line left out, or part of one.
public struct ImportConflict: Sendable, Equatable, Codable {
    /// `identity_in_use` (the identity is on another account: reported, never merged), `duplicate_legacy_id` (a
    /// second line with the same id), `id_in_use` (a kept id another account has), `unverified_email` (left out),
    /// `unknown_provider` (left out), `microsoft_without_tenant` (left out: no `--microsoft-tenant`),
    /// `skipped` (a multi-tenant, deleted or single sign-on user), `invalid` (a line that cannot be read).
    public var kind: String
    /// The line (1-based) or the record's place in the file.
    public var line: Int
    public var legacyID: String?
    public var provider: String?
    /// The account that holds what this line wanted, when another one does.
    public var accountID: String?
    public var message: String
    /// Whether the whole line was left out (otherwise only the part named).
    public var lineSkipped: Bool

    public init(kind: String, line: Int, legacyID: String?, provider: String? = nil, accountID: String? = nil,
                message: String, lineSkipped: Bool) {
        (self.kind, self.line, self.legacyID, self.provider) = (kind, line, legacyID, provider)
        (self.accountID, self.message, self.lineSkipped) = (accountID, message, lineSkipped)
    }

    enum CodingKeys: String, CodingKey {
        case kind, line, provider, message
        case legacyID = "legacy_id", accountID = "account_id", lineSkipped = "line_skipped"
    }
}

/// What an import did (or, with `dry_run`, would do): counts, every conflict (up to 1,000; `conflict_counts` has
/// them all) and warnings about the file.
///
/// ```swift
/// let report = try JSONDecoder().decode(ImportReport.self, from: data)
/// print(report.created, report.conflictCounts)
/// ```
public struct ImportReport: Sendable, Equatable, Codable {
    /// The batch this run wrote; `nil` for a dry run or one that created nothing.
    public var batchID: String?
    public var dryRun: Bool
    public var source: String
    public var format: String
    /// Records read.
    public var read: Int
    /// Accounts created (would be, on a dry run).
    public var created: Int
    /// Records whose legacy id an account already carries: a second run changes nothing.
    public var unchanged: Int
    /// Records left out whole.
    public var skipped: Int
    public var guests: Int
    public var disabled: Int
    /// People who signed in with a password there: counted, never imported (their verified email is their way in).
    public var passwordUsers: Int
    /// Of those, how many have no verified email, so no way in but the bridge.
    public var passwordUsersWithoutEmail: Int
    /// Identities created, by provider.
    public var identities: [String: Int]
    public var conflictCounts: [String: Int]
    public var conflicts: [ImportConflict]
    public var warnings: [String]

    public init(batchID: String? = nil, dryRun: Bool, source: String, format: String) {
        (self.batchID, self.dryRun, self.source, self.format) = (batchID, dryRun, source, format)
        (read, created, unchanged, skipped, guests, disabled, passwordUsers, passwordUsersWithoutEmail) = (0, 0, 0, 0, 0, 0, 0, 0)
        (identities, conflictCounts, conflicts, warnings) = ([:], [:], [], [])
    }

    enum CodingKeys: String, CodingKey {
        case source, format, read, created, unchanged, skipped, guests, disabled, identities, conflicts, warnings
        case batchID = "batch_id", dryRun = "dry_run", passwordUsers = "password_users"
        case passwordUsersWithoutEmail = "password_users_without_email", conflictCounts = "conflict_counts"
    }

    /// Writes `batch_id` as `null` when there is none, as the server does.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(batchID, forKey: .batchID)
        try container.encode(dryRun, forKey: .dryRun)
        try container.encode(source, forKey: .source)
        try container.encode(format, forKey: .format)
        try container.encode(read, forKey: .read)
        try container.encode(created, forKey: .created)
        try container.encode(unchanged, forKey: .unchanged)
        try container.encode(skipped, forKey: .skipped)
        try container.encode(guests, forKey: .guests)
        try container.encode(disabled, forKey: .disabled)
        try container.encode(passwordUsers, forKey: .passwordUsers)
        try container.encode(passwordUsersWithoutEmail, forKey: .passwordUsersWithoutEmail)
        try container.encode(identities, forKey: .identities)
        try container.encode(conflictCounts, forKey: .conflictCounts)
        try container.encode(conflicts, forKey: .conflicts)
        try container.encode(warnings, forKey: .warnings)
    }
}

/// An import batch as the admin API and the console list it.
public struct ImportBatch: Sendable, Equatable, Codable {
    public var id: String
    public var source: String
    public var format: String
    /// A file's name, `database` or `admin-api`.
    public var origin: String
    /// `cli` or `admin`.
    public var actor: String
    public var startedAt: Date
    public var finishedAt: Date?
    public var accountsCreated: Int
    /// Of the batch's accounts, how many someone has signed into since (through the bridge or a provider).
    public var accountsSignedIn: Int
    public var undoneAt: Date?
    public var accountsRemoved: Int?
    public var report: ImportReport?

    public init(id: String, source: String, format: String, origin: String, actor: String, startedAt: Date,
                finishedAt: Date?, accountsCreated: Int, accountsSignedIn: Int, undoneAt: Date?, accountsRemoved: Int?,
                report: ImportReport?) {
        (self.id, self.source, self.format, self.origin, self.actor) = (id, source, format, origin, actor)
        (self.startedAt, self.finishedAt, self.accountsCreated, self.accountsSignedIn) = (startedAt, finishedAt, accountsCreated, accountsSignedIn)
        (self.undoneAt, self.accountsRemoved, self.report) = (undoneAt, accountsRemoved, report)
    }

    enum CodingKeys: String, CodingKey {
        case id, source, format, origin, actor, report
        case startedAt = "started_at", finishedAt = "finished_at", accountsCreated = "accounts_created"
        case accountsSignedIn = "accounts_signed_in", undoneAt = "undone_at", accountsRemoved = "accounts_removed"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(source, forKey: .source)
        try container.encode(format, forKey: .format)
        try container.encode(origin, forKey: .origin)
        try container.encode(actor, forKey: .actor)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encode(finishedAt, forKey: .finishedAt)
        try container.encode(accountsCreated, forKey: .accountsCreated)
        try container.encode(accountsSignedIn, forKey: .accountsSignedIn)
        try container.encode(undoneAt, forKey: .undoneAt)
        try container.encode(accountsRemoved, forKey: .accountsRemoved)
        try container.encode(report, forKey: .report)
    }
}

/// `GET /v1/admin/imports`: batches, newest first, and per source how many accounts carry a legacy id and how
/// many of them someone has signed into (the console's switching-day counts).
public struct ImportBatchList: Sendable, Equatable, Codable {
    public var batches: [ImportBatch]
    public var sources: [LegacySourceCount]

    public init(batches: [ImportBatch], sources: [LegacySourceCount]) {
        (self.batches, self.sources) = (batches, sources)
    }
}

/// Accounts of one legacy source, and how many have crossed (signed in to Lanyard at least once).
public struct LegacySourceCount: Sendable, Equatable, Codable {
    public var source: String
    public var accounts: Int
    public var signedIn: Int

    public init(source: String, accounts: Int, signedIn: Int) {
        (self.source, self.accounts, self.signedIn) = (source, accounts, signedIn)
    }

    enum CodingKeys: String, CodingKey { case source, accounts, signedIn = "signed_in" }
}

/// `lanyard import undo` and `POST /v1/admin/imports/{id}/undo`: the accounts removed, and those kept because
/// someone signed into them since (removed too with `force`).
public struct ImportUndoResult: Sendable, Equatable, Codable {
    public var batchID: String
    public var removed: Int
    public var keptSignedIn: Int

    public init(batchID: String, removed: Int, keptSignedIn: Int) {
        (self.batchID, self.removed, self.keptSignedIn) = (batchID, removed, keptSignedIn)
    }

    enum CodingKeys: String, CodingKey { case removed, batchID = "batch_id", keptSignedIn = "kept_signed_in" }
}
