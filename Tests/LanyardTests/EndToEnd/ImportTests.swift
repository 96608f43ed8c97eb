import Foundation
import LanyardCore
import LanyardEmulator
import LanyardStore
import LanyardSupport
import LanyardWire
import Logging
import Testing

/// Switching day's import (reference section 24) on both databases: the fixtures' people written through the one
/// importer, then seen and used through HTTP.
@Suite struct ImportTests {
    static let client = ClientInfo(ip: nil, userAgent: "tests")
    /// Records per chunk where a test races an import's chunks: several chunks, few records (a whole-suite run shares
    /// two cores, and thousands of records there starve other tests' servers).
    static let chunk = 40

    static func fixture(_ name: String) throws -> [UInt8] {
        try Array(Data(contentsOf: ImportFormatTests.fixtures.appendingPathComponent(name)))
    }

    static func importFile(_ source: ImportSource, _ name: String, on server: TestServer, dryRun: Bool = false,
                           options: ImportOptions = ImportOptions()) async throws -> ImportReport {
        let dependencies = server.runtime.dependencies
        let file = try source.read(try fixture(name), options: options, now: server.clock.now())
        return try await Importer(dependencies).run(file, .init(origin: name, actor: "cli", dryRun: dryRun), client: client)
    }

    static func admin(_ configuration: inout LanyardConfiguration) { configuration.adminKey = AdminTests.key }

    static func users(_ server: TestServer, query: String = "") async throws -> [[String: Any]] {
        let response = try await server.request(.GET, "/v1/admin/users?limit=200" + query,
                                                headers: ["Authorization": "Bearer \(AdminTests.key)"])
        #expect(response.status == 200)
        return response.json["users"] as? [[String: Any]] ?? []
    }

    @Test(arguments: TestDatabase.available)
    func aDryRunWritesNothingAndASecondImportOfTheSameFileChangesNothing(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.admin) { server in
            let dry = try await Self.importFile(.firebase, "firebase-auth-export.json", on: server, dryRun: true)
            #expect(dry.created == 10 && dry.batchID == nil && dry.dryRun)
            #expect(dry.conflictCounts == ["microsoft_without_tenant": 1, "unverified_email": 3])
            #expect(try await Self.users(server).isEmpty)

            let first = try await Self.importFile(.firebase, "firebase-auth-export.json", on: server)
            #expect(first.created == 10 && first.unchanged == 0 && first.batchID != nil)
            // The anonymous user, and two with no verified way in (a password user with an unverified address, a
            // Microsoft user without a tenant): guests that keep their legacy id for the bridge.
            #expect(first.guests == 3 && first.disabled == 1 && first.passwordUsers == 2)
            #expect(first.identities == ["apple": 2, "google": 3, "facebook": 1, "email": 5])
            let before = try await Self.users(server)
            #expect(before.count == 10)

            let second = try await Self.importFile(.firebase, "firebase-auth-export.json", on: server)
            #expect(second.created == 0 && second.unchanged == 10 && second.batchID == nil)
            let after = try await Self.users(server)
            #expect(after.map { $0["id"] as? String } == before.map { $0["id"] as? String })
            #expect(after.map { $0["last_active_at"] as? String } == before.map { $0["last_active_at"] as? String })

            let found = try await Self.users(server, query: "&legacy_id=Mm7ZlSDz8PZJW9AxsDR2HcSLJ6iY")
            #expect(found.count == 1)
            #expect(found.first?["legacy_source"] as? String == "firebase" && found.first?["display_name"] as? String == "Chiara Bellini")
            #expect(found.first?["providers"] as? [String] == ["google", "apple", "email"])
            #expect(found.first?["created_at"] as? String == "2024-05-20T12:00:45.777Z")
            let list = try await server.request(.GET, "/v1/admin/imports", headers: ["Authorization": "Bearer \(AdminTests.key)"])
            let batches = list.json["batches"] as? [[String: Any]] ?? []
            #expect(batches.count == 1 && batches.first?["accounts_created"] as? Int == 10)
            #expect((list.json["sources"] as? [[String: Any]])?.first?["accounts"] as? Int == 10)
        }
    }

    @Test(arguments: TestDatabase.available)
    func anAppleSubjectAlreadyOnAnotherAccountIsReportedNeverMerged(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.admin) { server in
            let holder = try await server.signIn(.apple, sub: "000987.9a8b7c6d5e4f40312a1b2c3d4e5f6a7b.0917")
            let report = try await Self.importFile(.firebase, "firebase-auth-export.json", on: server)
            #expect(report.created == 9 && report.skipped == 1)
            let conflict = try #require(report.conflicts.first { $0.kind == "identity_in_use" })
            #expect(conflict.legacyID == "Mm7ZlSDz8PZJW9AxsDR2HcSLJ6iY" && conflict.provider == "apple")
            #expect(conflict.accountID == holder.userID && conflict.lineSkipped)
            // Neither account changed: the holder keeps only its Apple identity; Chiara's Google is nobody's.
            let me = try await server.get("/v1/users/me", bearer: holder.accessToken)
            #expect(me.json["linked_providers"] as? [String] == ["apple"] && me.json["legacy_id"] is NSNull)
            #expect(try await Self.users(server, query: "&legacy_id=Mm7ZlSDz8PZJW9AxsDR2HcSLJ6iY").isEmpty)
            let google = try await server.signIn(.google, sub: "117650938271640593827")
            #expect(google.isNewUser)
        }
    }

    @Test(arguments: TestDatabase.available)
    func undoIsRefusedOnceSomeoneSignedInUnlessForced(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.admin) { server in
            let auth = ["Authorization": "Bearer \(AdminTests.key)"]
            let lines = String(decoding: try Self.fixture("lanyard.jsonl"), as: UTF8.self)
            let dry = try await server.request(.POST, "/v1/admin/imports?dry_run=1", rawBody: lines, headers: auth)
            #expect(dry.status == 200 && dry.json["created"] as? Int == 11 && dry.json["batch_id"] is NSNull)
            let imported = try await server.request(.POST, "/v1/admin/imports", rawBody: lines, headers: auth)
            #expect(imported.status == 201)
            let batch = try #require(imported.json["batch_id"] as? String)
            // The Supabase line keeps its UUID as its Lanyard id.
            #expect(try await Self.users(server, query: "&legacy_id=b7d0c3e1-5a4f-4e29-9c61-2f8e0a7d4b35").first?["id"] as? String
                        == "b7d0c3e1-5a4f-4e29-9c61-2f8e0a7d4b35")
            // Bruno signs in with Google as before: his imported account, found by (provider, subject).
            let bruno = try await server.signIn(.google, sub: "104918273645091827364", email: "bruno.okafor@example.com")
            #expect(!bruno.isNewUser)
            let refused = try await server.request(.POST, "/v1/admin/imports/\(batch)/undo", headers: auth)
            #expect(refused.status == 409 && refused.errorReason == "signed_in_since")
            #expect(refused.errorDetails["accounts_signed_in"] as? Int == 1)
            #expect(try await Self.users(server).count == 11)
            let forced = try await server.request(.POST, "/v1/admin/imports/\(batch)/undo?force=1", headers: auth)
            #expect(forced.status == 200 && forced.json["removed"] as? Int == 11)
            #expect(try await Self.users(server).isEmpty)
            #expect(try await server.get("/v1/users/me", bearer: bruno.accessToken).status == 401)
            let again = try await server.request(.POST, "/v1/admin/imports/\(batch)/undo", headers: auth)
            #expect(again.status == 400)
            let shown = try await server.request(.GET, "/v1/admin/imports/\(batch)", headers: auth)
            #expect(shown.json["undone_at"] is String && shown.json["accounts_removed"] as? Int == 11)
        }
    }

    /// An operator undoes a batch whose import is still running (the console lists it without `finished_at`): the
    /// import stops at its next chunk and every account it wrote before is taken back; nothing is left behind.
    @Test(arguments: TestDatabase.available)
    func anUndoOfARunningImportStopsItAndTakesBackEverythingItWrote(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.admin) { server in
            let auth = ["Authorization": "Bearer \(AdminTests.key)"]
            let count = Self.chunk * 3
            let lines = (0..<count).map { index in
                #"{"legacy_id": "running-\#(index)", "legacy_source": "firebase", "identities": [{"provider": "google", "subject": "running-google-\#(index)"}]}"#
            }.joined(separator: "\n")
            let file = try ImportSource.jsonl.read(Array(lines.utf8), options: ImportOptions(), now: server.clock.now())
            let undone = UndoAnswer()
            var stopped: LanyardError?
            do {
                _ = try await Importer(server.runtime.dependencies, recordsPerChunk: Self.chunk).run(file, .init(origin: "running.jsonl", actor: "cli", dryRun: false),
                                                                         client: Self.client) { report in
                    guard report.created == Self.chunk, await undone.value == nil else { return }
                    let listed = try? await server.request(.GET, "/v1/admin/imports", headers: auth)
                    let running = (listed?.json["batches"] as? [[String: Any]])?.first { $0["finished_at"] is NSNull }
                    // Counted as its chunks land, before the run finishes.
                    #expect(running?["accounts_created"] as? Int == Self.chunk)
                    guard let batch = running?["id"] as? String,
                          let answer = try? await server.request(.POST, "/v1/admin/imports/\(batch)/undo", headers: auth) else { return }
                    await undone.set(answer)
                }
            } catch let error as LanyardError {
                stopped = error
            }
            let undo = try #require(await undone.value)
            #expect(undo.status == 200 && undo.json["removed"] as? Int == Self.chunk, "\(undo.text)")
            #expect(stopped?.details["reason"] == .string("batch_undone"))
            #expect(try await Self.users(server).isEmpty)
            // Run again, the file comes in whole: nothing of the stopped run is in its way.
            #expect(try await Importer(server.runtime.dependencies, recordsPerChunk: Self.chunk).run(
                file, .init(origin: "running.jsonl", actor: "cli", dryRun: false), client: Self.client).created == count)
        }
    }

    /// The undo begun while a chunk is being written (not between chunks): whichever commits first, nothing the
    /// import wrote is left behind, and the batch's counts agree.
    @Test(arguments: TestDatabase.available)
    func anUndoRacingAChunkInFlightLeavesNothingBehind(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.admin) { server in
            let auth = ["Authorization": "Bearer \(AdminTests.key)"]
            for round in 0..<3 {
                let lines = (0..<Self.chunk * 4).map { index in
                    #"{"legacy_id": "in-flight-\#(round)-\#(index)", "legacy_source": "firebase", "identities": [{"provider": "google", "subject": "in-flight-\#(round)-\#(index)"}]}"#
                }.joined(separator: "\n")
                let file = try ImportSource.jsonl.read(Array(lines.utf8), options: ImportOptions(), now: server.clock.now())
                let undo = UndoTask()
                let run = try? await Importer(server.runtime.dependencies, recordsPerChunk: Self.chunk).run(
                    file, .init(origin: "in-flight-\(round).jsonl", actor: "cli", dryRun: false), client: Self.client) { report in
                    guard report.created == Self.chunk else { return }
                    // Not awaited: the import goes on to its next chunk while the undo lists and begins.
                    await undo.start {
                        let listed = try await server.request(.GET, "/v1/admin/imports", headers: auth)
                        let batch = try #require((listed.json["batches"] as? [[String: Any]])?
                            .first { $0["origin"] as? String == "in-flight-\(round).jsonl" }?["id"] as? String)
                        let answer = try await server.request(.POST, "/v1/admin/imports/\(batch)/undo", headers: auth)
                        #expect(answer.status == 200, "\(answer.text)")
                        return batch
                    }
                }
                let batch = try #require(try await undo.finished())
                let shown = try await server.request(.GET, "/v1/admin/imports/\(batch)", headers: auth)
                #expect(try await Self.users(server, query: "&import_batch=\(batch)").isEmpty, "round \(round)")
                #expect(shown.json["accounts_removed"] as? Int == shown.json["accounts_created"] as? Int, "\(shown.text)")
                #expect(run == nil || run?.created == Self.chunk * 4)
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func anUndoNobodyOverlapsRemovesExactlyTheBatchsAccounts(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.admin) { server in
            let mine = try await server.signIn(.google, sub: "someone-else")
            let report = try await Self.importFile(.clerk, "clerk-users.json", on: server)
            #expect(report.created == 8)
            // The batch's accounts, and nobody else's.
            let listed = try await Self.users(server, query: "&import_batch=\(try #require(report.batchID))")
            #expect(listed.count == 8 && !listed.contains { $0["id"] as? String == mine.userID })
            #expect(try await Self.users(server, query: "&import_batch=imp_none").isEmpty)
            let result = try await ImportBatches(server.runtime.dependencies).undo(
                batchID: try #require(report.batchID), force: false, actor: "cli", client: Self.client)
            #expect(result.removed == 8 && result.keptSignedIn == 0)
            #expect(try await Self.users(server).map { $0["id"] as? String } == [mine.userID])
            // Imported again after the undo, they come back: nothing is left of the first batch in the way.
            #expect(try await Self.importFile(.clerk, "clerk-users.json", on: server).created == 8)
        }
    }

    /// The same file imported twice at once (two operators, a retried job) while the app's bridge brings the same
    /// people across: each person is one account, created once, and unchanged everywhere else, never reported as a
    /// conflict with themselves.
    @Test(arguments: TestDatabase.available)
    func importsAndCrossingsOfTheSamePeopleAtOnceMakeEachOneAccount(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.admin) { server in
            let count = Self.chunk * 3
            let lines = (0..<count).map { index in
                #"{"legacy_id": "twice-\#(index)", "legacy_source": "firebase", "identities": [{"provider": "google", "subject": "twice-google-\#(index)"}, {"provider": "apple", "subject": "twice-apple-\#(index)"}]}"#
            }.joined(separator: "\n")
            let file = try ImportSource.jsonl.read(Array(lines.utf8), options: ImportOptions(), now: server.clock.now())
            // Seconds of RSA signing: on a thread of its own, not one of the two the whole suite's tasks share.
            let tokens = try await offThePool {
                try (0..<count).map { index in
                    try server.legacyToken(.firebase, LegacyMintRequest(
                        sub: "twice-\(index)", identities: ["google.com": ["twice-google-\(index)"], "apple.com": ["twice-apple-\(index)"]],
                        signInProvider: "google.com"))
                }
            }
            let importer = Importer(server.runtime.dependencies, recordsPerChunk: Self.chunk)
            async let first = importer.run(file, .init(origin: "twice.jsonl", actor: "cli", dryRun: false), client: Self.client)
            async let second = importer.run(file, .init(origin: "twice.jsonl", actor: "cli", dryRun: false), client: Self.client)
            async let crossings = withThrowingTaskGroup(of: [TestResponse].self) { group in
                for lane in 0..<4 {
                    group.addTask {
                        var answers: [TestResponse] = []
                        for index in stride(from: lane, to: count, by: 4) {
                            answers.append(try await server.migrate(.firebase, tokens[index]))
                        }
                        return answers
                    }
                }
                return try await group.reduce(into: [TestResponse]()) { $0 += $1 }
            }
            let reports = try await [first, second]
            let crossed = try await crossings
            #expect(crossed.allSatisfy { $0.status == 200 }, "\(crossed.first { $0.status != 200 }?.text ?? "")")
            let made = reports.map(\.created).reduce(0, +) + crossed.filter { (try? Session($0).isNewUser) == true }.count
            #expect(made == count)
            #expect(reports.allSatisfy { $0.conflictCounts.isEmpty }, "\(reports.map(\.conflictCounts))")
            let listed = try await server.request(.GET, "/v1/admin/imports", headers: ["Authorization": "Bearer \(AdminTests.key)"])
            let firebase = (listed.json["sources"] as? [[String: Any]])?.first { $0["source"] as? String == "firebase" }
            #expect(firebase?["accounts"] as? Int == count)
        }
    }

    /// Operators pressing undo at once (two consoles, a retried request): the accounts are removed once, nobody is
    /// told an account was kept that was removed, and the batch records each removal once.
    @Test(arguments: TestDatabase.available)
    func undosRacingEachOtherCountEachRemovalOnce(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.admin) { server in
            let auth = ["Authorization": "Bearer \(AdminTests.key)"]
            let report = try await Self.importFile(.clerk, "clerk-users.json", on: server)
            let batch = try #require(report.batchID)
            let answers = try await server.concurrently(6) {
                try await server.request(.POST, "/v1/admin/imports/\(batch)/undo", headers: auth)
            }
            let done = answers.filter { $0.status == 200 }
            #expect(!done.isEmpty && answers.allSatisfy { $0.status == 200 || $0.status == 400 }, "\(answers.map(\.status))")
            #expect(done.map { $0.json["removed"] as? Int ?? -1 }.reduce(0, +) == report.created)
            #expect(done.allSatisfy { $0.json["kept_signed_in"] as? Int == 0 }, "\(done.map(\.text))")
            let shown = try await server.request(.GET, "/v1/admin/imports/\(batch)", headers: auth)
            #expect(shown.json["accounts_removed"] as? Int == report.created)
            #expect(try await Self.users(server).isEmpty)
        }
    }

    /// People signing in while an undo runs: whoever got a session keeps an account that exists (the undo keeps
    /// it), and every account the undo reports removed is gone.
    @Test(arguments: TestDatabase.available)
    func signInsRacingAnUndoKeepTheirAccounts(database: TestDatabase) async throws {
        try await TestServer.with(database, configure: Self.admin) { server in
            let people = (0..<40).map { "racing-google-\($0)" }
            let lines = people.enumerated().map { index, subject in
                #"{"legacy_id": "race-\#(index)", "legacy_source": "firebase", "identities": [{"provider": "google", "subject": "\#(subject)"}]}"#
            }.joined(separator: "\n")
            let imported = try await server.request(.POST, "/v1/admin/imports", rawBody: lines,
                                                    headers: ["Authorization": "Bearer \(AdminTests.key)"])
            let batch = try #require(imported.json["batch_id"] as? String)
            async let undone = ImportBatches(server.runtime.dependencies).undo(batchID: batch, force: false, actor: "cli",
                                                                               client: Self.client)
            let sessions = try await withThrowingTaskGroup(of: Session?.self) { group in
                for subject in people {
                    group.addTask { try? await server.signIn(.google, sub: subject) }
                }
                return try await group.reduce(into: [Session]()) { if let session = $1 { $0.append(session) } }
            }
            let result = try await undone
            for session in sessions {
                let me = try await server.get("/v1/users/me", bearer: session.accessToken)
                #expect(me.status == 200, "a session of a removed account: \(me.text)")
            }
            // Those who came after their imported account was removed signed up anew.
            let anew = sessions.filter(\.isNewUser).count
            #expect(try await Self.users(server).count == people.count - result.removed + anew)
        }
    }

    @Test(.enabled(if: TestDatabase.available.contains(.postgres)))
    func supabaseUsersImportStraightFromTheProjectsDatabase() async throws {
        let (url, cleanup) = try await TestDatabase.postgres.makeFresh()
        defer { Task { await cleanup() } }
        // GoTrue's tables as its migrations leave them, with the fixture's people, loaded by psql.
        let schema = ImportFormatTests.fixtures.appendingPathComponent("supabase-auth-schema.sql").path
        let plainURL = url.replacingOccurrences(of: "?sslmode=disable", with: "")
        for arguments in [["-c", "CREATE SCHEMA auth"], ["-f", schema]] {
            // ChildProcess, not Foundation's Process: its `run` crashes now and then in this busy test process.
            let psql = try ChildProcess(executable: "/usr/bin/env",
                                        arguments: ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", plainURL] + arguments,
                                        environment: ["PATH": "/usr/local/bin:/usr/bin:/bin"])
            _ = psql.standardOutput.readDataToEndOfFile()
            let errors = String(decoding: psql.standardError.readDataToEndOfFile(), as: UTF8.self)
            while psql.isRunning { try await Task.sleep(for: .milliseconds(10)) }
            #expect(psql.terminationStatus == 0, "\(errors)")
        }
        let rows = try await SupabaseAuthReader.read(url: url, logger: Logger(label: "tests"))
        #expect(rows.count == 9)
        let fromDatabase = ImportSource.supabaseRows(rows, options: ImportOptions(keepIDs: true), now: ImportFormatTests.now)
        let fromJSON = try ImportFormatTests.read(.supabase, "supabase-users.json", options: ImportOptions(keepIDs: true))
        #expect(fromDatabase.format == "supabase-database")
        let byID = Dictionary(uniqueKeysWithValues: fromJSON.records.map { ($0.legacyID, $0) })
        for record in fromDatabase.records {
            let json = try #require(byID[record.legacyID])
            #expect(ImportFormatTests.identities(record) == ImportFormatTests.identities(json), "\(record.legacyID)")
            #expect(record.createdAt == json.createdAt && record.lastSignInAt == json.lastSignInAt)
            #expect(record.disabled == json.disabled && record.anonymous == json.anonymous)
            #expect(record.metadata == json.metadata && record.passwordUser == json.passwordUser)
            #expect(record.displayName == json.displayName)
        }
        try await TestServer.with(.postgres, configure: Self.admin) { server in
            let report = try await Importer(server.runtime.dependencies).run(
                fromDatabase, .init(origin: "database", actor: "cli", dryRun: false), client: Self.client)
            #expect(report.created == 9 && report.guests == 2 && report.disabled == 1)
            #expect(try await Self.users(server, query: "&legacy_id=f3faa8e8-79ea-4723-8ad5-cfbc1d74bd1c").first?["id"] as? String
                        == "f3faa8e8-79ea-4723-8ad5-cfbc1d74bd1c")
        }
    }
}

/// The undo's answer, set from inside an import's progress callback.
private actor UndoAnswer {
    private(set) var value: TestResponse?
    func set(_ answer: TestResponse) { value = answer }
}

/// An undo started from inside an import's progress callback and left running beside the import.
private actor UndoTask {
    private var task: Task<String, any Error>?
    func start(_ work: @escaping @Sendable () async throws -> String) {
        guard task == nil else { return }
        task = Task { try await work() }
    }
    func finished() async throws -> String? { try await task?.value }
}
