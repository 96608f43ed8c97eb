import Foundation
import LanyardSupport
import LanyardWire

/// One person as every source's reader leaves them (reference section 24, `docs/import-formats.md`): the shape
/// of a `lanyard.jsonl` line, with what the reader already left out noted beside it.
public struct ImportRecord: Sendable, Equatable {
    /// The record's line (1-based) or place in the file, for the report.
    public var line: Int
    public var legacyID: String
    /// The source the legacy id belongs to, when the record names its own (a `lanyard.jsonl` line); otherwise the
    /// file's.
    public var legacySource: String?
    /// An account id to keep (a Supabase user's UUID with `--keep-ids`, a line's `id`).
    public var keptID: String?
    public var displayName: String?
    public var createdAt: Date?
    public var lastSignInAt: Date?
    public var disabled = false
    public var anonymous = false
    /// The account's user metadata (the object GoTrue's `user_metadata` shows).
    public var metadata: [String: JSONValue]?
    public var identities: [ImportIdentity] = []
    /// Signed in with a password there (never imported: counted).
    public var passwordUser = false
    /// Parts of the record left out (an unverified email, an unknown provider), each a conflict in the report.
    public var leftOut: [ImportConflict] = []

    public init(line: Int, legacyID: String) {
        (self.line, self.legacyID) = (line, legacyID)
    }
}

/// One identity of an imported person, as Lanyard stores it: the provider's name here and its subject.
public struct ImportIdentity: Sendable, Equatable {
    public var provider: String
    public var subject: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool

    public init(provider: String, subject: String, email: String? = nil, emailVerified: Bool = false) {
        (self.provider, self.subject, self.email, self.emailVerified) = (provider, subject, email, emailVerified)
        isPrivateEmail = email.map(ImportRules.isAppleRelay) ?? false
    }
}

/// What a reader hands the importer: the records, the records it left out whole, and what the operator should
/// know about the file itself.
public struct ImportFile: Sendable {
    public var source: String
    /// The format read (`firebase-auth-export`, `firebase-list-users`, `supabase-json`, `supabase-database`,
    /// `clerk-json`, `clerk-csv`, `auth0-ndjson`, `jsonl`).
    public var format: String
    public var records: [ImportRecord] = []
    public var skipped: [ImportConflict] = []
    public var warnings: [String] = []

    public init(source: String, format: String) {
        (self.source, self.format) = (source, format)
    }
}

/// How the operator asked the readers to read (`lanyard import` options).
public struct ImportOptions: Sendable {
    /// `--keep-ids`: a Supabase user keeps its UUID as its Lanyard id.
    public var keepIDs = false
    /// `--microsoft-tenant TID`: the tenant of a single-tenant app, so a Microsoft id without one becomes `TID:<id>`.
    public var microsoftTenant: String?
    /// `--provider NAME=LANYARD`: another source provider name mapped to a configured provider.
    public var providerMap: [String: String] = [:]

    public init(keepIDs: Bool = false, microsoftTenant: String? = nil, providerMap: [String: String] = [:]) {
        (self.keepIDs, self.microsoftTenant, self.providerMap) = (keepIDs, microsoftTenant?.lowercased(), providerMap)
    }
}

/// The rules every reader shares (`docs/import-formats.md` section 0): provider names, emails, times.
public enum ImportRules {
    /// What a source's provider name becomes.
    public enum Mapped: Equatable {
        /// An identity of this Lanyard provider, its subject as the source gives it.
        case provider(String)
        /// Microsoft: Lanyard's subject is `tid:oid`, which the source may not have.
        case microsoft
        /// The source's email or password method: an email identity when the address is verified.
        case email
        /// Not a way in here (a phone number).
        case ignored
        case unknown
    }

    /// Every source's names for the providers Lanyard knows, and an operator's own mapping.
    public static func map(_ name: String, options: ImportOptions) -> Mapped {
        if let mapped = options.providerMap[name] { return mapped == "microsoft" ? .microsoft : .provider(mapped) }
        let bare = name.hasPrefix("oauth_") ? String(name.dropFirst(6)) : name
        switch bare {
        case "apple.com", "apple": return .provider("apple")
        case "google.com", "google", "google-oauth2": return .provider("google")
        case "facebook.com", "facebook": return .provider("facebook")
        case "microsoft.com", "microsoft", "azure", "windowslive": return .microsoft
        case "password", "email", "auth0": return .email
        case "phone", "sms": return .ignored
        default: return .unknown
        }
    }

    /// An Apple private relay address: the Apple identity's, reaching the person only while the app's relay is
    /// set up, so it does not become an email identity of its own.
    static func isAppleRelay(_ address: String) -> Bool {
        address.lowercased().hasSuffix("@privaterelay.appleid.com")
    }

    /// The address as an email identity's subject, or nil when it is not one Lanyard can keep.
    static func emailSubject(_ address: String) -> String? {
        (try? EmailAddress(address))?.value
    }

    /// Adds the record's verified address as an email identity (not a relay address, not twice); an unverified one
    /// is noted as left out.
    static func addEmail(_ address: String?, verified: Bool, to record: inout ImportRecord) {
        guard let address, !address.isEmpty else { return }
        guard verified else {
            record.leftOut.append(ImportConflict(kind: "unverified_email", line: record.line, legacyID: record.legacyID,
                                                 provider: "email", message: "\(address) was never verified: left out",
                                                 lineSkipped: false))
            return
        }
        guard !isAppleRelay(address), let subject = emailSubject(address),
              !record.identities.contains(where: { $0.provider == "email" }) else { return }
        record.identities.append(ImportIdentity(provider: "email", subject: subject, email: subject, emailVerified: true))
    }

    /// Adds an identity of a source's provider, mapped; what cannot come is noted.
    static func addIdentity(sourceProvider: String, subject: String?, email: String?, emailVerified: Bool,
                            microsoftSubject: String? = nil, options: ImportOptions, to record: inout ImportRecord) {
        func leftOut(_ kind: String, _ message: String) {
            record.leftOut.append(ImportConflict(kind: kind, line: record.line, legacyID: record.legacyID,
                                                 provider: sourceProvider, message: message, lineSkipped: false))
        }
        switch map(sourceProvider, options: options) {
        case .ignored, .email:
            return
        case .unknown:
            leftOut("unknown_provider", "\(sourceProvider) is not a provider Lanyard knows (map it with --provider)")
        case .microsoft:
            let tenantSubject = options.microsoftTenant.flatMap { tenant in subject.map { tenant + ":" + $0.lowercased() } }
            guard let full = microsoftSubject ?? tenantSubject else {
                leftOut("microsoft_without_tenant", "the Microsoft id carries no tenant (pass --microsoft-tenant for a single-tenant app)")
                return
            }
            // Microsoft's email is whatever a tenant's administrator typed: never verified (reference section 25).
            append(ImportIdentity(provider: "microsoft", subject: full, email: email, emailVerified: false), to: &record)
        case .provider(let provider):
            guard let subject, !subject.isEmpty, subject.utf8.count <= 255, !subject.containsNUL else {
                leftOut("invalid", "the \(sourceProvider) identity has no subject")
                return
            }
            append(ImportIdentity(provider: provider, subject: subject, email: email, emailVerified: emailVerified),
                   to: &record)
        }
    }

    /// One identity per provider per account (the schema's rule): a second is noted, not merged.
    private static func append(_ identity: ImportIdentity, to record: inout ImportRecord) {
        if let held = record.identities.first(where: { $0.provider == identity.provider }) {
            if held.subject != identity.subject {
                record.leftOut.append(ImportConflict(kind: "provider_already_linked", line: record.line,
                                                     legacyID: record.legacyID, provider: identity.provider,
                                                     message: "a second \(identity.provider) identity on one account: left out",
                                                     lineSkipped: false))
            }
            return
        }
        record.identities.append(identity)
    }

    /// A display name: trimmed, at most 200 characters, nil when empty.
    static func name(_ parts: String?...) -> String? {
        let name = parts.compactMap { $0?.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
        return name.isEmpty || name.containsNUL ? nil : String(name.prefix(200))
    }
}
