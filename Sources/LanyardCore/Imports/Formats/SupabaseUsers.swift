import Foundation
import LanyardSupport
import LanyardWire

/// Supabase Auth's users (`docs/import-formats.md` section 2): `auth.users` rows with their `auth.identities`, read
/// from the project's database (`SupabaseAuthReader`) or from the JSON the documented query writes; GoTrue's admin
/// API shape (`user_metadata`, identities whose `id` is the subject) reads too. The legacy id is the user's UUID.
enum SupabaseUsers {
    /// The claims GoTrue copies into `raw_user_meta_data` from every linked identity: not the app's metadata.
    static let providerClaims: Set<String> = [
        "iss", "sub", "aud", "email", "email_verified", "phone", "phone_verified", "name", "full_name", "avatar_url",
        "picture", "provider_id", "custom_claims", "preferred_username", "user_name", "slug", "nickname",
    ]

    static func read(_ bytes: [UInt8], options: ImportOptions, now: Date) throws(ImportFileError) -> ImportFile {
        let users: [JSONValue]
        switch try ImportFileError.parse(bytes) {
        case .array(let array): users = array
        case .object(let top):
            guard case .array(let array)? = top["users"] else { throw ImportFileError("expected an array of users") }
            users = array
        default: throw ImportFileError("expected an array of users")
        }
        return read(users: users.enumerated().map { ($0.offset + 1, $0.element) }, format: "supabase-json",
                    options: options, now: now)
    }

    /// Rows as JSON objects (the database reader gives the same members, times as milliseconds).
    static func read(users: [(line: Int, value: JSONValue)], format: String, options: ImportOptions, now: Date) -> ImportFile {
        var file = ImportFile(source: "supabase", format: format)
        for (line, value) in users {
            guard case .object(let user) = value, let id = user["id"]?.stringValue, UUID(uuidString: id) != nil else {
                file.skipped.append(ImportConflict(kind: "invalid", line: line, legacyID: nil,
                                                   message: "a user without a UUID id", lineSkipped: true))
                continue
            }
            if let deleted = user["deleted_at"], deleted != .null {
                file.skipped.append(ImportConflict(kind: "skipped", line: line, legacyID: id,
                                                   message: "soft-deleted in Supabase", lineSkipped: true))
                continue
            }
            if user["is_sso_user"]?.lenientBool == true {
                file.skipped.append(ImportConflict(kind: "skipped", line: line, legacyID: id, message: """
                    a single sign-on (SAML) user: Lanyard has no SAML provider to carry the identity to
                    """, lineSkipped: true))
                continue
            }
            file.records.append(record(user, id: id, line: line, options: options, now: now))
        }
        return file
    }

    private static func record(_ user: [String: JSONValue], id: String, line: Int, options: ImportOptions, now: Date) -> ImportRecord {
        var record = ImportRecord(line: line, legacyID: id)
        if options.keepIDs { record.keptID = id.lowercased() }
        let userMetadata: [String: JSONValue] = if case .object(let data)? = user["raw_user_meta_data"] ?? user["user_metadata"] { data } else { [:] }
        record.displayName = ImportRules.name(userMetadata["full_name"]?.stringValue)
            ?? ImportRules.name(userMetadata["name"]?.stringValue) ?? ImportRules.name(userMetadata["display_name"]?.stringValue)
        let metadata = userMetadata.filter { !providerClaims.contains($0.key) && $0.key != "display_name" }
        record.metadata = metadata.isEmpty ? nil : metadata
        record.createdAt = ImportTimes.parse(user["created_at"])
        record.lastSignInAt = ImportTimes.parse(user["last_sign_in_at"])
        if let bannedUntil = ImportTimes.parse(user["banned_until"]) { record.disabled = bannedUntil > now }
        record.anonymous = user["is_anonymous"]?.lenientBool ?? false
        record.passwordUser = user["has_password"]?.lenientBool
            ?? (user["encrypted_password"]?.stringValue.map { !$0.isEmpty } ?? false)
        let identities: [JSONValue] = if case .array(let list)? = user["identities"] { list } else { [] }
        let adminShape = identities.contains { if case .object(let identity) = $0 { identity["identity_id"] != nil } else { false } }
        var emailVerifiedByIdentity = false
        for case .object(let identity) in identities {
            guard let provider = identity["provider"]?.stringValue else { continue }
            let data: [String: JSONValue] = if case .object(let data)? = identity["identity_data"] { data } else { [:] }
            let subject = (adminShape ? identity["id"] : identity["provider_id"])?.stringValue ?? data["sub"]?.stringValue
            let email = data["email"]?.stringValue
            let verified = data["email_verified"]?.lenientBool ?? false
            if provider == "email" {
                if verified, email?.lowercased() == user["email"]?.stringValue?.lowercased() { emailVerifiedByIdentity = true }
                continue
            }
            var microsoft: String?
            if provider == "azure", case .object(let claims)? = data["custom_claims"],
               let tenant = claims["tid"]?.stringValue, let object = claims["oid"]?.stringValue, !object.isEmpty {
                microsoft = tenant.lowercased() + ":" + object.lowercased()
            }
            ImportRules.addIdentity(sourceProvider: provider, subject: subject, email: email, emailVerified: verified,
                                    microsoftSubject: microsoft, options: options, to: &record)
        }
        let confirmed = user["email_confirmed_at"].map { $0 != .null } ?? false
        ImportRules.addEmail(user["email"]?.stringValue, verified: confirmed || emailVerifiedByIdentity, to: &record)
        return record
    }
}
