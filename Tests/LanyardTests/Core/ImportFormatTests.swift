import Foundation
import LanyardCore
import LanyardSupport
import Testing

/// Every source's real export format (`Tests/Fixtures/imports`, `docs/import-formats.md`) read into the records the
/// importer writes: the same invented people in each, so one reader is checked against another.
@Suite struct ImportFormatTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/imports")
    static let now = Date(timeIntervalSince1970: 1_764_000_000)  // 2025-11-24
    static let tenant = "3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9"

    static func read(_ source: ImportSource, _ name: String, options: ImportOptions = ImportOptions()) throws -> ImportFile {
        let bytes = try Array(Data(contentsOf: fixtures.appendingPathComponent(name)))
        return try source.read(bytes, options: options, now: now)
    }

    static func identities(_ record: ImportRecord?) -> [String] {
        (record?.identities ?? []).map { "\($0.provider):\($0.subject)" }
    }

    @Test func firebasesExportKeepsEveryWayInKeyedBySubjectNeverByEmail() throws {
        let file = try Self.read(.firebase, "firebase-auth-export.json")
        #expect(file.format == "firebase-auth-export")
        #expect(file.records.count == 10 && file.skipped.isEmpty)
        // Custom claims were the backend's, not the person's: not carried into metadata the person may change.
        #expect(file.warnings.count == 1 && file.warnings[0].contains("3 users have custom claims"))
        let byID = Dictionary(uniqueKeysWithValues: file.records.map { ($0.legacyID, $0) })
        let chiara = byID["Mm7ZlSDz8PZJW9AxsDR2HcSLJ6iY"]
        #expect(Self.identities(chiara) == ["google:117650938271640593827", "apple:000987.9a8b7c6d5e4f40312a1b2c3d4e5f6a7b.0917",
                                            "email:chiara.bellini@example.org"])
        #expect(chiara?.metadata == nil)
        #expect(chiara?.createdAt == Date(timeIntervalSince1970: 1_716_206_445.777))
        // The Apple user's relay address is the Apple identity's, not an email way in of its own.
        #expect(Self.identities(byID["YvyI6dl13qSpAywJeECJlri6PZ5Q"]) == ["apple:001234.5f2c9e0a7b1d4c3e8f6a2b9d0c1e7f45.1012"])
        #expect(byID["YvyI6dl13qSpAywJeECJlri6PZ5Q"]?.identities.first?.isPrivateEmail == true)
        let anonymous = byID["tf9LGUEC6PJCPE0VZFFhjAmIR7Ga"]
        #expect(anonymous?.anonymous == true && anonymous?.identities.isEmpty == true)
        #expect(byID["JqebCwbY5K0qRozzd24h5jk3N0pd"]?.disabled == true)
        // A password user with an unverified address: counted, the address left out and said so.
        let elif = byID["30aaukUcwWyrawdiCSaeZHaeFLB1"]
        #expect(elif?.passwordUser == true && elif?.identities.isEmpty == true)
        #expect(elif?.leftOut.map(\.kind) == ["unverified_email"])
        // Facebook's addresses come unverified from Firebase: the Facebook identity only.
        #expect(Self.identities(byID["rLWzB0pLH5qW5siep4nlXPh2PnPb"]) == ["facebook:10160498732165498"])
        // Microsoft ids carry no tenant: left out and reported, unless the operator names the app's tenant.
        #expect(byID["7tLMd8QlnaJuTfszB5NE7S9pe8I9"]?.leftOut.map(\.kind) == ["microsoft_without_tenant", "unverified_email"])
        let withTenant = try Self.read(.firebase, "firebase-auth-export.json", options: ImportOptions(microsoftTenant: Self.tenant))
        #expect(Self.identities(withTenant.records.first { $0.legacyID == "7tLMd8QlnaJuTfszB5NE7S9pe8I9" })
                    == ["microsoft:\(Self.tenant):7c1e2f3a-4b5d-4e6f-9a0b-1c2d3e4f5a6b"])
    }

    @Test func theJSONLinesFixtureIsTheFirebaseExportConverted() throws {
        let firebase = try Self.read(.firebase, "firebase-auth-export.json", options: ImportOptions(microsoftTenant: Self.tenant))
        let lines = try Self.read(.jsonl, "lanyard.jsonl")
        #expect(lines.skipped.isEmpty && lines.records.count == 11)
        for record in firebase.records {
            let line = try #require(lines.records.first { $0.legacyID == record.legacyID })
            #expect(line.legacySource == "firebase")
            #expect(Set(Self.identities(line)) == Set(Self.identities(record)), "\(record.legacyID)")
            #expect(line.anonymous == record.anonymous && line.disabled == record.disabled)
            #expect(line.passwordUser == record.passwordUser && line.metadata == record.metadata)
            #expect(line.createdAt == record.createdAt && line.lastSignInAt == record.lastSignInAt)
        }
        let lena = try #require(lines.records.first { $0.legacySource == "supabase" })
        #expect(lena.keptID == "b7d0c3e1-5a4f-4e29-9c61-2f8e0a7d4b35")
    }

    @Test func listUsersKeepsWhatAuthExportKeepsToTheSecond() throws {
        let export = try Self.read(.firebase, "firebase-auth-export.json")
        let listed = try Self.read(.firebase, "firebase-list-users.json")
        #expect(listed.format == "firebase-list-users")
        #expect(listed.records.map(\.legacyID) == export.records.map(\.legacyID))
        for (a, b) in zip(export.records, listed.records) {
            #expect(Self.identities(a) == Self.identities(b), "\(a.legacyID)")
            #expect(a.anonymous == b.anonymous && a.disabled == b.disabled && a.metadata == b.metadata)
            #expect(a.createdAt.map { $0.timeIntervalSince1970.rounded(.down) } == b.createdAt?.timeIntervalSince1970)
        }
    }

    @Test func anExportOfFirebaseToolsBefore15_19ImportsWithAWarningThatAppleUsersAreMissing() throws {
        let file = try Self.read(.firebase, "firebase-auth-export-before-15.19.json")
        #expect(file.records.count == 4)
        let warning = try #require(file.warnings.first)
        #expect(warning.contains("Apple users are missing") && warning.contains("listUsers"))
        #expect(!file.records.contains { $0.identities.contains { $0.provider == "apple" } })
    }

    @Test func supabasesRowsBecomeRecordsWithTheirUUIDsTenantsAndMetadataWithoutProviderClaims() throws {
        let file = try Self.read(.supabase, "supabase-users.json", options: ImportOptions(keepIDs: true))
        #expect(file.records.count == 9 && file.skipped.isEmpty)
        let byID = Dictionary(uniqueKeysWithValues: file.records.map { ($0.legacyID, $0) })
        let chiara = byID["f3faa8e8-79ea-4723-8ad5-cfbc1d74bd1c"]
        #expect(chiara?.keptID == "f3faa8e8-79ea-4723-8ad5-cfbc1d74bd1c")
        #expect(chiara?.metadata == ["locale": "it"])
        #expect(chiara?.displayName == "Chiara Bellini")
        #expect(Self.identities(chiara).count == 3)
        // Azure keeps tid and oid: Lanyard's Microsoft subject.
        let ivo = try #require(byID["63783933-d5f0-4510-bf6a-f8af81df6383"]?.identities.first)
        #expect(ivo.provider == "microsoft" && ivo.subject.split(separator: ":").count == 2 && !ivo.emailVerified)
        // A ban that ran out is no ban; one in the future disables.
        #expect(byID["47aa2dba-d9e2-4c8d-809f-001680289e32"]?.disabled == false)
        #expect(byID["30f47f35-d038-4cfb-8add-40e92c34bf1c"]?.disabled == true)
        #expect(byID["7f453a0e-f509-4b4f-95de-6e91074206e2"]?.anonymous == true)
        #expect(byID["a93f32a9-a172-4102-8e4e-dc90253d9e30"]?.leftOut.map(\.kind) == ["unverified_email"])
        #expect(byID["47aa2dba-d9e2-4c8d-809f-001680289e32"]?.metadata == ["newsletter": true])
    }

    @Test func clerksAPIJSONCarriesSocialAccountsAndItsCSVOnlyAddressesWithAWarning() throws {
        let json = try Self.read(.clerk, "clerk-users.json")
        #expect(json.format == "clerk-json" && json.records.count == 8)
        let chiara = try #require(json.records.first { $0.legacyID == "user_2wMzzuVtYkwMJFrCfZ4U2EqkNk6" })
        #expect(Self.identities(chiara) == ["google:117650938271640593827", "apple:000987.9a8b7c6d5e4f40312a1b2c3d4e5f6a7b.0917",
                                            "email:chiara.bellini@example.org"])
        // unsafe_metadata is the person's own; public and private metadata were the backend's.
        #expect(chiara.metadata == ["theme": "dark"])
        #expect(json.records.allSatisfy { $0.metadata == nil || $0.metadata?["role"] == nil })
        #expect(json.warnings.count == 1 && json.warnings[0].contains("3 users have public or private metadata"))
        #expect(json.records.first { $0.legacyID == "user_23FZ9NoDxQshIISj3bb5642ldGD" }?.disabled == true)
        let csv = try Self.read(.clerk, "clerk-export.csv")
        #expect(csv.format == "clerk-csv" && csv.records.map(\.legacyID) == json.records.map(\.legacyID))
        #expect(csv.warnings.count == 1 && !csv.records.contains { $0.identities.contains { $0.provider != "email" } })
    }

    @Test func auth0sExportTakesItsUserIDAsTheLegacyID() throws {
        let file = try Self.read(.auth0, "auth0-export.ndjson")
        #expect(file.records.count == 9 && file.skipped.isEmpty)
        let chiara = try #require(file.records.first { $0.legacyID.hasPrefix("google-oauth2|117650938271640593827") })
        #expect(Self.identities(chiara).prefix(2) == ["google:117650938271640593827", "apple:000987.9a8b7c6d5e4f40312a1b2c3d4e5f6a7b.0917"])
        #expect(chiara.metadata == ["theme": "dark", "locale": "it"])
        #expect(file.records.filter(\.passwordUser).count == 2)
        #expect(file.records.first { $0.legacyID.hasPrefix("google-oauth2|112093847561") }?.disabled == true)
        #expect(file.warnings.count == 1)  // app_metadata is not the user's own
    }

    @Test func aBadLineIsReportedAndTheOthersRead() throws {
        let text = """
            {"legacy_id": "a", "legacy_source": "firebase", "identities": [{"provider": "apple", "subject": "001.a"}]}
            {"legacy_id": "b", "legacy_source": "firebase", "identities": [], "colour": "blue"}
            not json
            {"legacy_id": "c", "legacy_source": "Bad Source", "identities": []}
            {"legacy_id": "d", "legacy_source": "firebase", "identities": [{"provider": "github", "subject": "7"}], "anonymous": false}
            """
        let file = try ImportSource.jsonl.read(Array(text.utf8), options: ImportOptions(), now: Self.now)
        #expect(file.records.map(\.legacyID) == ["a", "d"])
        #expect(file.skipped.map(\.line) == [2, 3, 4])
        #expect(file.skipped.first?.message == "unknown key colour")
        #expect(file.records.last?.leftOut.map(\.kind) == ["unknown_provider"])
        #expect(throws: ImportFileError.self) { try ImportSource.firebase.read(Array("[".utf8), options: ImportOptions(), now: Self.now) }
    }
}
