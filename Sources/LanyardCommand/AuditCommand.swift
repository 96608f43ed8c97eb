import ArgumentParser
import Foundation
import LanyardCore
import LanyardWire

/// `lanyard audit tail`: the latest audit events, oldest at the bottom; `--follow` keeps printing new ones.
struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The audit log.", subcommands: [Tail.self])

    struct Tail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The latest audit events.")

        @Option(help: "Only this account's events") var user: String?
        @Option(help: "Only events of this type, such as sign_in or account.merged") var type: String?
        @Option(help: "How many (1-200)") var limit = 20
        @Flag(help: "Keep printing new events (Ctrl-C to stop)") var follow = false
        @Flag(help: "Print JSON lines") var json = false

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let administration = AccountAdministration(runtime.dependencies)
                var events = try await administration.audit(userID: user, type: type, before: nil, limit: limit).items
                var newest = events.first?.id ?? 0
                try print(events.reversed())
                while follow {
                    try await Task.sleep(for: .seconds(1))
                    events = try await administration.audit(userID: user, type: type, before: nil, limit: 200).items
                        .filter { $0.id > newest }
                    newest = events.first?.id ?? newest
                    try print(events.reversed())
                }
            }
        }

        private func print(_ events: some Collection<AdminAuditEvent>) throws {
            if json {
                for event in events { try Output.jsonLine(event) }
            } else {
                Output.events(Array(events), newestFirst: false)
            }
        }
    }
}
