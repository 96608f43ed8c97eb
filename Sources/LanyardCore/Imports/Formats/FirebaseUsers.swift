import Foundation
import LanyardSupport
import LanyardWire

/// Firebase's two files (`docs/import-formats.md` section 1): `firebase auth:export` JSON (`localId`,
/// `providerUserInfo`, times as millisecond strings) and the Admin SDK's `listUsers()` JSON (`uid`, `providerData`,
/// HTTP dates), told apart by their keys. The legacy id is the Firebase uid.
enum FirebaseUsers {
    static func read(_ bytes: [UInt8], options: ImportOptions) throws(ImportFileError) -> ImportFile {
        let users: [JSONValue]
        switch try ImportFileError.parse(bytes) {
        case .object(let top):
            guard case .array(let array)? = top["users"] else { throw ImportFileError("expected {\"users\": [...]}") }
            users = array
        case .array(let array): users = array
        default: throw ImportFileError("expected {\"users\": [...]} or an array of users")
        }
        let listUsers = users.contains { if case .object(let user) = $0 { user["uid"] != nil } else { false } }
        var file = ImportFile(source: "firebase", format: listUsers ? "firebase-list-users" : "firebase-auth-export")
        var lookAlikes = 0
        var customClaims = 0
        // Before firebase-tools 15.19.0 auth:export kept only these four providers' entries.
        var onlyOldProviders = true
        for (index, value) in users.enumerated() {
            let line = index + 1
            guard case .object(let user) = value,
                  let uid = (listUsers ? user["uid"] : user["localId"])?.stringValue, !uid.isEmpty else {
                file.skipped.append(ImportConflict(kind: "invalid", line: line, legacyID: nil,
                                                   message: "a user without \(listUsers ? "uid" : "localId")", lineSkipped: true))
                continue
            }
            if let tenant = user["tenantId"]?.stringValue {
                file.skipped.append(ImportConflict(kind: "skipped", line: line, legacyID: uid, message: """
                    a user of the multi-tenant project's tenant \(tenant): import each tenant into a Lanyard server of its own
                    """, lineSkipped: true))
                continue
            }
            var record = ImportRecord(line: line, legacyID: uid)
            let email = user["email"]?.stringValue
            let verified = user["emailVerified"]?.lenientBool ?? false
            record.displayName = ImportRules.name(user["displayName"]?.stringValue)
            record.disabled = user["disabled"]?.lenientBool ?? false
            if case .object(let metadata)? = user["metadata"] {
                record.createdAt = ImportTimes.parse(metadata["creationTime"])
                record.lastSignInAt = ImportTimes.parse(metadata["lastSignInTime"])
            } else {
                record.createdAt = ImportTimes.parse(user["createdAt"])
                record.lastSignInAt = ImportTimes.parse(user["lastSignedInAt"])
            }
            // Custom claims were set by the app's backend and the person could not change them; Lanyard's metadata is
            // the person's own (they may edit it): carried over, a role in them would be anyone's for the asking.
            switch user["customClaims"] ?? user["customAttributes"] {
            case .object(let claims)? where !claims.isEmpty: customClaims += 1
            case .string(let text)? where !(JSONParser.parseObject(Array(text.utf8))?.isEmpty ?? true): customClaims += 1
            default: break
            }
            record.passwordUser = user["passwordHash"]?.stringValue.map { !$0.isEmpty } ?? false
            let entries: [JSONValue] = if case .array(let entries)? = user[listUsers ? "providerData" : "providerUserInfo"] { entries } else { [] }
            for case .object(let entry) in entries {
                guard let provider = entry["providerId"]?.stringValue else { continue }
                if !["google.com", "facebook.com", "twitter.com", "github.com"].contains(provider) { onlyOldProviders = false }
                let entryEmail = entry["email"]?.stringValue
                // A provider entry's email has no verification bit of its own: it is verified when it is the
                // account's verified address (Apple's always is).
                ImportRules.addIdentity(sourceProvider: provider, subject: (listUsers ? entry["uid"] : entry["rawId"])?.stringValue,
                                        email: entryEmail, emailVerified: verified && entryEmail?.lowercased() == email?.lowercased(),
                                        options: options, to: &record)
            }
            ImportRules.addEmail(email, verified: verified, to: &record)
            // No provider, email, phone or password: an anonymous user (or a custom-token one; the files cannot tell).
            record.anonymous = entries.isEmpty && email == nil && user["phoneNumber"] == nil && !record.passwordUser
            if !listUsers, email != nil, verified, !record.passwordUser, user["providerUserInfo"] == .array([]) {
                lookAlikes += 1
            }
            file.records.append(record)
        }
        if !listUsers, onlyOldProviders, lookAlikes > 0 {
            file.warnings.append("""
                This file names no Apple or Microsoft sign-in, and \(lookAlikes) verified-email users have no provider \
                and no password: a file written by firebase-tools before 15.19.0 looks like this, because auth:export \
                dropped every apple.com and microsoft.com entry (Apple users are missing from it). Imported, they would get their email only, and their next Sign in with Apple would make a new \
                account. Export with firebase-tools 15.19.0 or later, or with the Admin SDK's listUsers() \
                (docs/import-formats.md section 1.2), unless they really are email-link users.
                """)
        }
        if customClaims > 0 {
            file.warnings.append("""
                \(customClaims) users have custom claims: not imported (your backend set them and the person could not \
                change them; Lanyard's metadata is the person's own, which they may change). Keep roles and plans in your \
                own backend, keyed by the legacy id.
                """)
        }
        return file
    }
}
