import ArgumentParser
import Foundation
import LanyardCore
import LanyardServer
import LanyardStore
import LanyardWire

/// `lanyard import …` (reference section 24): people from Firebase, Supabase, Clerk, Auth0 or Lanyard's own lines,
/// into the configured database; `undo` takes a batch back.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import users from Firebase, Supabase, Clerk, Auth0 or Lanyard's JSON lines (switching day).",
        discussion: """
            Keyed by (provider, subject) and the source's own user id (the legacy id), never by email. Run with \
            --dry-run first: it reports counts and every conflict and writes nothing. Running a file again changes \
            nothing. Each run that creates accounts is a batch: lanyard import undo BATCH.
            """,
        subcommands: [Firebase.self, Supabase.self, Clerk.self, Auth0.self, Lines.self, Undo.self, List.self])

    struct Options: ParsableArguments {
        @Flag(help: "Report what would happen; write nothing") var dryRun = false
        @Option(help: "The tenant id of a single-tenant Microsoft app: its Microsoft users' subjects become TID:<id>")
        var microsoftTenant: String?
        @Option(help: "Map another provider name of the source to a configured one (github.com=github); repeatable")
        var provider: [String] = []
        @Flag(help: "Print the report as JSON") var json = false

        func importOptions(keepIDs: Bool = false) throws -> ImportOptions {
            var map: [String: String] = [:]
            for pair in provider {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                    throw ValidationError("--provider takes SOURCE_NAME=LANYARD_NAME, got \(pair)")
                }
                map[parts[0]] = parts[1]
            }
            if let microsoftTenant, UUID(uuidString: microsoftTenant) == nil {
                throw ValidationError("--microsoft-tenant takes the tenant's id (a UUID)")
            }
            return ImportOptions(keepIDs: keepIDs, microsoftTenant: microsoftTenant, providerMap: map)
        }
    }

    struct Firebase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "firebase auth:export JSON, or the Admin SDK's listUsers() JSON (which keeps Apple users).")
        @Argument(help: "The file") var file: String
        @OptionGroup var options: Options
        func run() async throws { try await ImportCommand.run(.firebase, file: file, options: options) }
    }

    struct Supabase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Supabase Auth: the project's database URL (auth.users and auth.identities), or their JSON.")
        @Argument(help: "postgres://… of the Supabase project, or the JSON file") var source: String
        @Flag(name: .customLong("keep-ids"), help: "Each user keeps its Supabase UUID as its Lanyard id") var keepIDs = false
        @OptionGroup var options: Options
        func run() async throws {
            try await ImportCommand.run(.supabase, file: source, options: options, keepIDs: keepIDs)
        }
    }

    struct Clerk: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clerk: the Backend API's users JSON (with social accounts), or the dashboard's CSV.")
        @Argument(help: "The file") var file: String
        @OptionGroup var options: Options
        func run() async throws { try await ImportCommand.run(.clerk, file: file, options: options) }
    }

    struct Auth0: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Auth0: a bulk user export (JSON lines, unzipped).")
        @Argument(help: "The file") var file: String
        @OptionGroup var options: Options
        func run() async throws { try await ImportCommand.run(.auth0, file: file, options: options) }
    }

    struct Lines: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "jsonl", abstract: "Lanyard's own import lines (one JSON object a line; docs/reference.md).")
        @Argument(help: "The file") var file: String
        @OptionGroup var options: Options
        func run() async throws { try await ImportCommand.run(.jsonl, file: file, options: options) }
    }

    struct Undo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove the accounts a batch created; refused when someone has signed into one since.")
        @Argument(help: "The batch id (imp_…)") var batch: String
        @Flag(help: "Remove them even so (their sessions end; Apple is told of its identities)") var force = false
        @Flag(help: "Print JSON") var json = false

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let result = try await ImportBatches(runtime.dependencies).undo(batchID: batch, force: force, actor: "cli",
                                                                                client: CommandRuntime.client)
                if json { return try Output.json(result) }
                print("Removed \(result.removed) accounts of \(result.batchID).")
                if result.keptSignedIn > 0 {
                    print("Kept \(result.keptSignedIn) that someone signed into while the undo ran.")
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Import batches, newest first, and who has crossed.")
        @Flag(help: "Print JSON") var json = false

        /// Imported, running (or stopped before it finished), undoing (an undo begun, not finished) or undone.
        static func state(_ batch: ImportBatch) -> String {
            if let undone = batch.undoneAt {
                return batch.accountsRemoved == nil ? "undoing since \(Output.time(undone))" : "undone \(Output.time(undone))"
            }
            return batch.finishedAt == nil ? "running or stopped" : "imported"
        }

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let list = try await ImportBatches(runtime.dependencies).list()
                if json { return try Output.json(list) }
                Output.table(["BATCH", "SOURCE", "FROM", "STARTED", "CREATED", "SIGNED IN", "STATE"], list.batches.map {
                    [$0.id, $0.source, $0.origin, Output.time($0.startedAt), "\($0.accountsCreated)", "\($0.accountsSignedIn)",
                     Self.state($0)]
                }, empty: "No import batches.")
                for source in list.sources {
                    print("\(source.source): \(source.signedIn) of \(source.accounts) accounts have signed in")
                }
            }
        }
    }

    static func run(_ source: ImportSource, file path: String, options: Options, keepIDs: Bool = false) async throws {
        let importOptions = try options.importOptions(keepIDs: keepIDs)
        try await CommandRuntime.with { runtime in
            let now = runtime.dependencies.clock.now()
            let file: ImportFile
            let origin: String
            if source == .supabase, path.hasPrefix("postgres://") || path.hasPrefix("postgresql://") {
                let rows = try await SupabaseAuthReader.read(url: path, logger: runtime.logger)
                file = ImportSource.supabaseRows(rows, options: importOptions, now: now)
                origin = "database"
            } else {
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw ValidationError("cannot read \(path)")
                }
                do {
                    file = try source.read(Array(data), options: importOptions, now: now,
                                           providers: Set(runtime.dependencies.signInMethods.offered.map(\.provider.rawValue)))
                } catch let error as ImportFileError {
                    throw ValidationError("\(path): \(error.description)")
                }
                origin = URL(fileURLWithPath: path).lastPathComponent
            }
            let report = try await Importer(runtime.dependencies).run(
                file, .init(origin: origin, actor: "cli", dryRun: options.dryRun), client: CommandRuntime.client)
            if options.json { return try Output.json(report) }
            printReport(report)
        }
    }

    static func printReport(_ report: ImportReport) {
        let verb = report.dryRun ? "Would create" : "Created"
        print("\(report.source) (\(report.format)): read \(report.read)")
        print("\(verb) \(report.created) accounts (\(report.guests) guests, \(report.disabled) disabled); "
              + "\(report.unchanged) already imported; \(report.skipped) left out")
        let identities = report.identities.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        if !identities.isEmpty { print("Identities: \(identities)") }
        if report.passwordUsers > 0 {
            print("Password users: \(report.passwordUsers) (their verified email is their way in; "
                  + "\(report.passwordUsersWithoutEmail) have none and cross only through the bridge)")
        }
        if !report.conflictCounts.isEmpty {
            print("Conflicts: " + report.conflictCounts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                .joined(separator: ", "))
            for conflict in report.conflicts {
                print("  line \(conflict.line) \(conflict.legacyID ?? "-") \(conflict.kind): \(conflict.message)")
            }
        }
        for warning in report.warnings { print("Warning: \(warning)") }
        if let batch = report.batchID { print("Batch \(batch) (undo: lanyard import undo \(batch))") }
        if report.dryRun { print("Dry run: nothing was written.") }
    }
}
