import Foundation
import LanyardSupport
import LanyardWire

/// Lanyard's own line format (`docs/import-formats.md` section 5, reference section 24): one JSON object a line,
/// for any source a script can read, and what `POST /v1/admin/imports` takes. Strict: an unknown key or a value of
/// the wrong type makes the line an `invalid` conflict (a typo must not drop data silently).
enum LanyardLines {
    static let keys: Set<String> = [
        "legacy_id", "legacy_source", "id", "display_name", "created_at", "last_sign_in_at", "disabled", "anonymous",
        "metadata", "identities", "password_user",
    ]
    static let identityKeys: Set<String> = ["provider", "subject", "email", "email_verified"]

    static func read(_ bytes: [UInt8], options: ImportOptions, providers: Set<String>) -> ImportFile {
        var file = ImportFile(source: "jsonl", format: "jsonl")
        for (line, text) in ImportLines.split(bytes) {
            do {
                file.records.append(try record(text, line: line, options: options, providers: providers))
            } catch {
                file.skipped.append(ImportConflict(kind: "invalid", line: line, legacyID: error.legacyID,
                                                   message: error.message, lineSkipped: true))
            }
        }
        return file
    }

    struct LineError: Error {
        var message: String
        var legacyID: String?
    }

    static func isSourceName(_ name: String) -> Bool {
        (1...32).contains(name.utf8.count)
            && name.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 || $0 == 95 }
    }

    private static func record(_ text: ArraySlice<UInt8>, line: Int, options: ImportOptions,
                               providers: Set<String>) throws(LineError) -> ImportRecord {
        guard case .object(let object)? = try? JSONParser.parse(text) else { throw LineError(message: "not a JSON object") }
        let legacyID = object["legacy_id"]?.stringValue
        func fail(_ message: String) -> LineError { LineError(message: message, legacyID: legacyID) }
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) { throw fail("unknown key \(unknown)") }
        guard let legacyID, (1...255).contains(legacyID.utf8.count), !legacyID.containsNUL else {
            throw fail("legacy_id must be a string of 1 to 255 bytes")
        }
        guard let source = object["legacy_source"]?.stringValue, isSourceName(source) else {
            throw fail("legacy_source must be firebase, supabase, clerk, auth0 or a name of [a-z0-9_-]{1,32}")
        }
        var record = ImportRecord(line: line, legacyID: legacyID)
        record.legacySource = source
        func string(_ key: String) throws(LineError) -> String? {
            switch object[key] {
            case nil, .null?: return nil
            case .string(let value)?: return value
            default: throw fail("\(key) must be a string or null")
            }
        }
        func bool(_ key: String) throws(LineError) -> Bool {
            switch object[key] {
            case nil: return false
            case .bool(let value)?: return value
            default: throw fail("\(key) must be true or false")
            }
        }
        func time(_ key: String) throws(LineError) -> Date? {
            guard let text = try string(key) else { return nil }
            guard let date = ImportTimes.parse(text), !text.allSatisfy(\.isNumber) else { throw fail("\(key) must be an RFC 3339 time") }
            return date
        }
        if let id = try string("id") {
            guard let uuid = UUID(uuidString: id) else { throw fail("id must be a UUID") }
            record.keptID = uuid.uuidString.lowercased()
        }
        record.displayName = ImportRules.name(try string("display_name"))
        record.createdAt = try time("created_at")
        record.lastSignInAt = try time("last_sign_in_at")
        record.disabled = try bool("disabled")
        record.anonymous = try bool("anonymous")
        record.passwordUser = try bool("password_user")
        switch object["metadata"] {
        case nil, .null?: break
        case .object(let metadata)?: record.metadata = metadata.isEmpty ? nil : metadata
        default: throw fail("metadata must be an object")
        }
        guard case .array(let identities)? = object["identities"] else { throw fail("identities must be an array") }
        guard !(record.anonymous && !identities.isEmpty) else { throw fail("an anonymous line has no identities") }
        for value in identities {
            guard case .object(let identity) = value,
                  let provider = identity["provider"]?.stringValue, let subject = identity["subject"]?.stringValue else {
                throw fail("each identity needs provider and subject strings")
            }
            if let unknown = identity.keys.sorted().first(where: { !identityKeys.contains($0) }) {
                throw fail("unknown identity key \(unknown)")
            }
            let email: String? = switch identity["email"] {
            case nil, .null?: nil
            case .string(let value)?: value
            default: throw fail("an identity's email must be a string")
            }
            let verified: Bool = switch identity["email_verified"] {
            case nil: false
            case .bool(let value)?: value
            default: throw fail("email_verified must be true or false")
            }
            switch provider {
            case "email":
                ImportRules.addEmail(subject, verified: verified, to: &record)
            case "apple", "google", "microsoft", "facebook":
                guard !subject.isEmpty, subject.utf8.count <= 255, !subject.containsNUL else { throw fail("an identity's subject must be 1 to 255 bytes") }
                record.identities.append(ImportIdentity(provider: provider, subject: subject, email: email,
                                                        emailVerified: provider == "microsoft" ? false : verified))
            case let name where providers.contains(name):
                guard !subject.isEmpty, subject.utf8.count <= 255, !subject.containsNUL else { throw fail("an identity's subject must be 1 to 255 bytes") }
                record.identities.append(ImportIdentity(provider: name, subject: subject, email: email, emailVerified: verified))
            default:
                record.leftOut.append(ImportConflict(kind: "unknown_provider", line: line, legacyID: legacyID, provider: provider,
                                                     message: "\(provider) is not a provider this server knows", lineSkipped: false))
            }
        }
        guard Set(record.identities.map(\.provider)).count == record.identities.count else {
            throw fail("two identities of one provider")
        }
        return record
    }
}
