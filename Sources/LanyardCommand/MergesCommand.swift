import ArgumentParser
import Foundation
import LanyardCore
import LanyardServer

/// `lanyard merges …`: an account's merges, and reverting one (within 30 days), on the configured database.
struct MergesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merges", abstract: "An account's merges, and reverting one (on the configured database).",
        subcommands: [List.self, Revert.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The merges an account took part in, newest first.")

        @Option(help: "The account id") var user: String
        @Flag(help: "Print JSON") var json = false

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let list = try await MergeAdministration(runtime.dependencies).list(userID: user.lowercased())
                if json { return try Output.json(list) }
                Output.table(["MERGE", "INTO", "FROM", "BY", "WHEN", "REVERTED"], list.merges.map {
                    [$0.mergeID, $0.into, $0.from, $0.actor, Output.time($0.createdAt), $0.revertedAt.map(Output.time) ?? ""]
                }, empty: "No merges.")
            }
        }
    }

    struct Revert: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revert a merge (within 30 days): the merged account comes back with its sign-in methods and the records nobody changed since.")
        @Argument(help: "The merge id") var id: String

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let report = try await MergeAdministration(runtime.dependencies).revert(mergeID: id.lowercased(),
                                                                                       client: CommandRuntime.client)
                print("Reverted \(id): \(report.from) is back with \(report.identitiesReturned) sign-in method(s) and "
                      + "\(report.recordsReturned) record(s); \(report.recordsKept) changed since stay with \(report.into).")
            }
        }
    }
}
