import Foundation
import LanyardSupport
import LanyardWire

/// Auth0's bulk export (`docs/import-formats.md` section 4): newline-delimited JSON, one user a line. The legacy id
/// is `user_id` (`google-oauth2|…`, what the app's backend got as `sub`).
enum Auth0Users {
    static func read(_ bytes: [UInt8], options: ImportOptions) -> ImportFile {
        var file = ImportFile(source: "auth0", format: "auth0-ndjson")
        var appMetadata = 0
        for (line, text) in ImportLines.split(bytes) {
            guard case .object(let user)? = try? JSONParser.parse(text), let id = user["user_id"]?.stringValue, !id.isEmpty else {
                file.skipped.append(ImportConflict(kind: "invalid", line: line, legacyID: nil,
                                                   message: "not a JSON object with a user_id", lineSkipped: true))
                continue
            }
            var record = ImportRecord(line: line, legacyID: id)
            let email = user["email"]?.stringValue
            let name = user["name"]?.stringValue
            record.displayName = (name == email ? nil : ImportRules.name(name))
                ?? ImportRules.name(user["given_name"]?.stringValue, user["family_name"]?.stringValue)
            record.createdAt = ImportTimes.parse(user["created_at"])
            record.lastSignInAt = ImportTimes.parse(user["last_login"])
            record.disabled = user["blocked"]?.lenientBool ?? false
            if case .object(let metadata)? = user["user_metadata"], !metadata.isEmpty { record.metadata = metadata }
            if case .object(let metadata)? = user["app_metadata"], !metadata.isEmpty { appMetadata += 1 }
            var verified = user["email_verified"]?.lenientBool ?? false
            if case .array(let identities)? = user["identities"] {
                for case .object(let identity) in identities {
                    guard let provider = identity["provider"]?.stringValue else { continue }
                    let subject: String? = switch identity["user_id"] {
                    case .string(let text)?: text
                    case .number(let number)?: String(format: "%.0f", number)
                    default: nil
                    }
                    let profile: [String: JSONValue] = if case .object(let data)? = identity["profileData"] { data } else { [:] }
                    if provider == "auth0" { record.passwordUser = true }
                    // Passwordless email proves the address by its use.
                    if provider == "email" { verified = verified || email != nil }
                    ImportRules.addIdentity(sourceProvider: provider, subject: subject,
                                            email: profile["email"]?.stringValue ?? email,
                                            emailVerified: profile["email_verified"]?.lenientBool ?? verified,
                                            options: options, to: &record)
                }
            }
            ImportRules.addEmail(email, verified: verified, to: &record)
            file.records.append(record)
        }
        if appMetadata > 0 {
            file.warnings.append("""
                \(appMetadata) users have app_metadata: not imported (Lanyard's metadata is the user's own, which the \
                person may change); user_metadata is.
                """)
        }
        return file
    }
}

/// Newline-delimited records: each non-blank line with its number.
enum ImportLines {
    static func split(_ bytes: [UInt8]) -> [(line: Int, text: ArraySlice<UInt8>)] {
        var lines: [(Int, ArraySlice<UInt8>)] = []
        var start = bytes.startIndex
        var number = 1
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: 10) ?? bytes.endIndex
            var text = bytes[start..<end]
            if text.last == 13 { text = text.dropLast() }
            if text.contains(where: { ![9, 32].contains($0) }) { lines.append((number, text)) }
            start = end + 1
            number += 1
        }
        return lines
    }
}
