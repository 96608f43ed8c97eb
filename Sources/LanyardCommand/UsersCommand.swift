import ArgumentParser
import Foundation
import LanyardCore
import LanyardServer
import LanyardSupport

/// `lanyard users …`: what the admin API does, on the configured database directly.
struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find, inspect, disable, sign out and delete accounts (on the configured database).",
        subcommands: [List.self, Show.self, Disable.self, Enable.self, SignOut.self, Delete.self, PurgeAnonymous.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Accounts, newest first.")

        @Option(help: "An account id, a provider subject, or part of an email or name") var query: String?
        @Flag(help: "Guests only") var guests = false
        @Flag(help: "Signed-in accounts only") var signedIn = false
        @Flag(help: "Disabled accounts only") var disabled = false
        @Option(help: "apple or google") var provider: String?
        @Option(help: "How many (1-200)") var limit = 50
        @Option(help: "Continue after a previous page (its next cursor)") var cursor: String?
        @Flag(help: "Print JSON") var json = false

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let search = AccountAdministration.Search(
                    query: query, anonymous: guests ? true : (signedIn ? false : nil), disabled: disabled ? true : nil,
                    provider: provider, cursor: cursor, limit: limit)
                let page = try await AccountAdministration(runtime.dependencies).users(search)
                if json { return try Output.json(page) }
                Output.table(["ID", "NAME", "EMAIL", "METHODS", "STATUS", "CREATED", "LAST ACTIVE"], page.items.map { user in
                    [user.id, user.displayName ?? "", user.email ?? "", user.providers.joined(separator: ","),
                     Output.status(disabled: user.disabled, anonymous: user.isAnonymous),
                     Output.time(user.createdAt), Output.time(user.lastActiveAt)]
                }, empty: "No accounts match.")
                if let next = page.nextCursor { print("\nMore: lanyard users list --cursor \(next)") }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An account: identities, active sessions, latest audit events.")

        @Argument(help: "The account id") var id: String
        @Flag(help: "Print JSON") var json = false

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let details = try await AccountAdministration(runtime.dependencies).user(id: id)
                if json { return try Output.json(details) }
                let user = details.user
                print("\(user.displayName ?? user.email ?? "(no name)")  \(user.id)")
                print("\(Output.status(disabled: user.disabled, anonymous: user.isAnonymous)) · created "
                      + "\(Output.time(user.createdAt)) · last active \(Output.time(user.lastActiveAt))\n")
                Output.table(["PROVIDER", "SUBJECT", "EMAIL", "LINKED", "LAST SIGN-IN"], details.identities.map {
                    [$0.provider, $0.subject, $0.email ?? "", Output.time($0.linkedAt), $0.lastSignInAt.map(Output.time) ?? ""]
                }, empty: "No sign-in methods (a guest).")
                print("")
                Output.table(["SESSION", "METHOD", "IP", "DEVICE", "SIGNED IN", "LAST REFRESHED"], details.sessions.map {
                    [$0.id, $0.method, $0.clientIP ?? "", String(($0.userAgent ?? "").prefix(40)), Output.time($0.createdAt),
                     Output.time($0.lastRefreshedAt)]
                }, empty: "No active sessions.")
                print("")
                Output.events(details.audit)
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disable an account: its sessions end, and sign-in, refresh and its tokens are refused.")
        @Argument(help: "The account id") var id: String

        func run() async throws {
            try await CommandRuntime.with { runtime in
                _ = try await AccountAdministration(runtime.dependencies).update(id: id, displayName: nil, disabled: true,
                                                                                 client: CommandRuntime.client)
                print("Disabled \(id); its sessions have ended.")
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled account (the person signs in again).")
        @Argument(help: "The account id") var id: String

        func run() async throws {
            try await CommandRuntime.with { runtime in
                _ = try await AccountAdministration(runtime.dependencies).update(id: id, displayName: nil, disabled: false,
                                                                                 client: CommandRuntime.client)
                print("Enabled \(id).")
            }
        }
    }

    struct SignOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "signout", abstract: "End every session of an account.")
        @Argument(help: "The account id") var id: String

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let ended = try await AccountAdministration(runtime.dependencies).signOut(id: id, client: CommandRuntime.client)
                print("Ended \(ended) session\(ended == 1 ? "" : "s") of \(id).")
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an account with its identities, sessions and data (as if the person deleted it).")
        @Argument(help: "The account id") var id: String
        @Flag(help: "Do not ask for confirmation") var yes = false

        func run() async throws {
            if !yes {
                print("Delete account \(id) and all its data? Type the id again to confirm: ", terminator: "")
                guard readLine()?.trimmingCharacters(in: .whitespaces) == id else {
                    throw ValidationError("Not confirmed; nothing was deleted.")
                }
            }
            try await CommandRuntime.with { runtime in
                try await AccountDeletion(runtime.dependencies).deleteByAdmin(userID: id, client: CommandRuntime.client)
                print("Deleted \(id).")
            }
        }
    }

    struct PurgeAnonymous: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "purge-anonymous", abstract: "Delete anonymous accounts idle for longer than a duration.")

        @Option(help: "e.g. 30d, 12h, 90m, 3600s") var olderThan: String

        func run() async throws {
            guard let seconds = DurationText.seconds(olderThan) else {
                throw ValidationError("--older-than takes a duration such as 30d, 12h, 90m or 3600s")
            }
            let configuration = try Startup.configuration()
            let runtime = try await Startup.runtime(configuration, logger: Startup.logger(configuration))
            let cutoff = Date().addingTimeInterval(-seconds)
            let count = try await AnonymousAccounts(runtime.dependencies).purge(idleSince: cutoff)
            print("Deleted \(count) anonymous account\(count == 1 ? "" : "s") idle since \(cutoff).")
            await runtime.shutdown()
        }
    }
}
