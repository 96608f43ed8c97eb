import ArgumentParser
import Foundation
import LanyardCore
import LanyardServer

/// `lanyard groups …`: what the admin API does for groups, on the configured database directly.
struct GroupsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groups", abstract: "Find, inspect and dissolve groups (on the configured database).",
        subcommands: [List.self, Show.self, Dissolve.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Groups, newest first.")

        @Option(help: "Part of a group's name or id") var query: String?
        @Option(help: "How many (1-200)") var limit = 50
        @Flag(help: "Print JSON") var json = false

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let list = try await GroupAdministration(runtime.dependencies).groups(query: query, limit: limit)
                if json { return try Output.json(list) }
                Output.table(["ID", "NAME", "KIND", "MEMBERS", "CREATED"], list.groups.map {
                    [$0.id.rawValue, $0.name, $0.kind.rawValue, String($0.memberCount), Output.time($0.createdAt)]
                }, empty: "No groups match.")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A group: its members and pending invites.")

        @Argument(help: "The group id") var id: String
        @Flag(help: "Print JSON") var json = false

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let details = try await GroupAdministration(runtime.dependencies).group(id: id)
                if json { return try Output.json(details) }
                let group = details.group
                print("\(group.name)  \(group.id)")
                print("\(group.kind) · \(group.memberCount) members · created \(Output.time(group.createdAt)) · "
                      + "on owner deleted: \(group.onOwnerDeleted)\n")
                Output.table(["MEMBER", "NAME", "ROLE", "JOINED"], (group.members ?? []).map {
                    [$0.userID.rawValue, $0.displayName ?? "", $0.role.rawValue, Output.time($0.joinedAt)]
                }, empty: "No members.")
                print("")
                Output.table(["INVITE", "ROLE", "USES", "EXPIRES", "BY"], details.invites.map {
                    [$0.id.rawValue, $0.role.rawValue, "\($0.uses)/\($0.maxUses)", Output.time($0.expiresAt), $0.createdBy.rawValue]
                }, empty: "No pending invites.")
            }
        }
    }

    struct Dissolve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Dissolve a group: its members, invites and records go (its members' accounts stay).")
        @Argument(help: "The group id") var id: String
        @Flag(help: "Do not ask for confirmation") var yes = false

        func run() async throws {
            if !yes {
                print("Dissolve group \(id) with all its records? Type the id again to confirm: ", terminator: "")
                guard readLine()?.trimmingCharacters(in: .whitespaces) == id else {
                    throw ValidationError("Not confirmed; nothing was dissolved.")
                }
            }
            try await CommandRuntime.with { runtime in
                try await GroupAdministration(runtime.dependencies).dissolve(id: id, client: CommandRuntime.client)
                print("Dissolved \(id).")
            }
        }
    }
}
