import Foundation
import LanyardSupport
import LanyardWire

/// Clerk's users (`docs/import-formats.md` section 3): the Backend API's JSON (an array of `User`, with external
/// accounts) or the dashboard's CSV export (no social accounts, times, bans or metadata). The legacy id is the
/// `user_…` id.
enum ClerkUsers {
    static func read(_ bytes: [UInt8], options: ImportOptions) throws(ImportFileError) -> ImportFile {
        let first = bytes.first { ![9, 10, 13, 32].contains($0) }
        if first == UInt8(ascii: "[") || first == UInt8(ascii: "{") { return try readJSON(bytes, options: options) }
        return try readCSV(bytes, options: options)
    }

    private static func readJSON(_ bytes: [UInt8], options: ImportOptions) throws(ImportFileError) -> ImportFile {
        let users: [JSONValue]
        switch try ImportFileError.parse(bytes) {
        case .array(let array): users = array
        case .object(let top):
            guard case .array(let array)? = top["data"] ?? top["users"] else { throw ImportFileError("expected an array of Clerk users") }
            users = array
        default: throw ImportFileError("expected an array of Clerk users")
        }
        var file = ImportFile(source: "clerk", format: "clerk-json")
        var backendMetadata = 0
        for (index, value) in users.enumerated() {
            let line = index + 1
            guard case .object(let user) = value, let id = user["id"]?.stringValue, !id.isEmpty else {
                file.skipped.append(ImportConflict(kind: "invalid", line: line, legacyID: nil, message: "a user without an id",
                                                   lineSkipped: true))
                continue
            }
            var record = ImportRecord(line: line, legacyID: id)
            record.displayName = ImportRules.name(user["first_name"]?.stringValue, user["last_name"]?.stringValue)
                ?? ImportRules.name(user["username"]?.stringValue)
            record.createdAt = ImportTimes.parse(user["created_at"])
            record.lastSignInAt = ImportTimes.parse(user["last_sign_in_at"])
            // `locked` expires by itself (failed attempts): only a ban disables.
            record.disabled = user["banned"]?.lenientBool ?? false
            record.passwordUser = user["password_enabled"]?.lenientBool ?? false
            // `unsafe_metadata` is the one the person may change, as Lanyard's metadata is; public and private
            // metadata were the backend's alone and are not carried over.
            if case .object(let metadata)? = user["unsafe_metadata"], !metadata.isEmpty { record.metadata = metadata }
            for key in ["public_metadata", "private_metadata"] {
                if case .object(let metadata)? = user[key], !metadata.isEmpty { backendMetadata += 1; break }
            }
            if case .array(let accounts)? = user["external_accounts"] {
                for case .object(let account) in accounts {
                    guard let provider = account["provider"]?.stringValue else { continue }
                    if case .object(let verification)? = account["verification"],
                       let status = verification["status"]?.stringValue, status != "verified" { continue }
                    ImportRules.addIdentity(sourceProvider: provider, subject: account["provider_user_id"]?.stringValue,
                                            email: account["email_address"]?.stringValue,
                                            emailVerified: account["email_address_verified"]?.lenientBool ?? false,
                                            options: options, to: &record)
                }
            }
            for key in ["saml_accounts", "enterprise_accounts"] {
                if case .array(let accounts)? = user[key], !accounts.isEmpty {
                    record.leftOut.append(ImportConflict(kind: "unknown_provider", line: line, legacyID: id, provider: key,
                                                         message: "enterprise single sign-on accounts are not imported",
                                                         lineSkipped: false))
                }
            }
            // The primary address first, then the others: one email identity per account.
            let primary = user["primary_email_address_id"]?.stringValue
            let addresses: [[String: JSONValue]] = if case .array(let list)? = user["email_addresses"] {
                list.compactMap { if case .object(let address) = $0 { address } else { nil } }
            } else { [] }
            for address in addresses.filter({ $0["id"]?.stringValue == primary }) + addresses.filter({ $0["id"]?.stringValue != primary }) {
                let status: String? = if case .object(let verification)? = address["verification"] { verification["status"]?.stringValue } else { nil }
                ImportRules.addEmail(address["email_address"]?.stringValue, verified: status == "verified", to: &record)
            }
            file.records.append(record)
        }
        if backendMetadata > 0 {
            file.warnings.append("""
                \(backendMetadata) users have public or private metadata: not imported (your backend set it and the \
                person could not change it; Lanyard's metadata is the person's own). unsafe_metadata is imported.
                """)
        }
        return file
    }

    private static func readCSV(_ bytes: [UInt8], options: ImportOptions) throws(ImportFileError) -> ImportFile {
        let rows = CSV.rows(String(decoding: bytes, as: UTF8.self))
        guard let header = rows.first, let idColumn = header.firstIndex(of: "id") else {
            throw ImportFileError("expected Clerk's CSV export (a header row starting with id,first_name,last_name)")
        }
        func column(_ name: String) -> Int? { header.firstIndex(of: name) }
        var file = ImportFile(source: "clerk", format: "clerk-csv")
        file.warnings.append("""
            Clerk's dashboard CSV has no social accounts, times, bans or metadata: its Apple and Google users come in \
            with their verified email only, and their next Sign in with Apple or Google would make a new account. \
            Import the Backend API's JSON instead (docs/import-formats.md section 3.1).
            """)
        for (index, row) in rows.dropFirst().enumerated() where !(row.count == 1 && row[0].isEmpty) {
            let line = index + 2
            func value(_ name: String) -> String? {
                guard let index = column(name), index < row.count, !row[index].isEmpty else { return nil }
                return row[index]
            }
            guard idColumn < row.count, !row[idColumn].isEmpty else {
                file.skipped.append(ImportConflict(kind: "invalid", line: line, legacyID: nil, message: "a row without an id",
                                                   lineSkipped: true))
                continue
            }
            var record = ImportRecord(line: line, legacyID: row[idColumn])
            record.displayName = ImportRules.name(value("first_name"), value("last_name")) ?? ImportRules.name(value("username"))
            record.passwordUser = value("password_digest") != nil
            let split = { (text: String?) in (text ?? "").split(whereSeparator: { $0 == "," || $0 == "|" }).map { $0.trimmingCharacters(in: .whitespaces) } }
            let verified = split(value("verified_email_addresses"))
            let primary = value("primary_email_address")
            for address in verified.filter({ $0 == primary }) + verified.filter({ $0 != primary }) {
                ImportRules.addEmail(address, verified: true, to: &record)
            }
            for address in split(value("unverified_email_addresses")) {
                ImportRules.addEmail(address, verified: false, to: &record)
            }
            file.records.append(record)
        }
        return file
    }
}

/// RFC 4180 CSV: quoted cells with doubled quotes, commas and line breaks inside quotes.
enum CSV {
    static func rows(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var cell = ""
        var quoted = false
        var iterator = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = iterator.next()
        while let scalar = pending {
            pending = iterator.next()
            if quoted {
                if scalar == "\"" {
                    if pending == "\"" { cell.unicodeScalars.append("\""); pending = iterator.next() } else { quoted = false }
                } else {
                    cell.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"": quoted = true
            case ",": row.append(cell); cell = ""
            case "\r": continue
            case "\n": row.append(cell); rows.append(row); row = []; cell = ""
            default: cell.unicodeScalars.append(scalar)
            }
        }
        if !cell.isEmpty || !row.isEmpty { row.append(cell); rows.append(row) }
        return rows
    }
}
