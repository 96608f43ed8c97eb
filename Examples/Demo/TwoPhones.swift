import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lanyard

/// The seeds' two phones, the iPhone half: `lanyard-demo iphone --server URL` is Ada's iPhone, signed in with Apple
/// through the Swift SDK, driven line by line on standard input by the other half (the Kotlin SDK's "Android phone",
/// `scripts/two-phones` and the Kotlin tests' `TwoPhonesTest`). Each command gets one answer line; `watch` also prints a
/// `change` line for every change that arrives, as it arrives.
///
///     signin-apple SUB          → signed-in USER_ID
///     link-google SUB           → linked apple,google
///     watch COLLECTION          → watching            (then: change ID TEXT, for each change)
///     put COLLECTION ID TEXT    → put ID VERSION
///     whoami                    → user USER_ID
///     quit                      → (exits)
///
/// A failure answers `error MESSAGE` and the phone goes on.
enum TwoPhones {
    struct Note: Codable, Sendable { var text: String }

    static func iPhone(_ arguments: [String]) async -> Int32 {
        guard let flag = arguments.firstIndex(of: "--server"), flag + 1 < arguments.count,
              let url = URL(string: arguments[flag + 1]) else {
            FileHandle.standardError.write(Data("usage: lanyard-demo iphone --server http://127.0.0.1:8080\n".utf8))
            return 2
        }
        let phone = Phone(client: LanyardClient(url: url, storage: MemorySessionStore()), emulator: Emulator(url: url))
        for await line in standardInputLines() {
            let words = line.split(separator: " ", maxSplits: 3).map(String.init)
            guard let command = words.first else { continue }
            if command == "quit" { break }
            do {
                say(try await phone.run(command, Array(words.dropFirst())))
            } catch {
                say("error \(String(describing: error).replacingOccurrences(of: "\n", with: " "))")
            }
        }
        return 0
    }

    /// One line on standard output, at once (a pipe would otherwise hold it in a buffer).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Standard input's lines, read on a thread of their own so no task of the SDK waits behind a blocked read.
    static func standardInputLines() -> AsyncStream<String> {
        AsyncStream { continuation in
            let reader = Thread {
                while let line = readLine() { continuation.yield(line) }
                continuation.finish()
            }
            reader.start()
        }
    }

    actor Phone {
        let client: LanyardClient
        let emulator: Emulator
        var watchers: [Task<Void, Never>] = []

        init(client: LanyardClient, emulator: Emulator) {
            self.client = client
            self.emulator = emulator
        }

        func run(_ command: String, _ arguments: [String]) async throws -> String {
            switch (command, arguments.count) {
            case ("signin-apple", 1):
                // Sign in with Apple as on a device: the request carries the nonce's hash, Lanyard gets the raw nonce.
                let nonce = AppleNonce()
                let token = try await emulator.idToken(.apple, sub: arguments[0], nonce: nonce.hashed)
                let result = try await client.signInWithApple(idToken: token, rawNonce: nonce.raw)
                return "signed-in \(result.user.id)"
            case ("link-google", 1):
                let user = try await client.link(.google(idToken: try await emulator.idToken(.google, sub: arguments[0])))
                return "linked " + user.linkedProviders.map(\.provider.rawValue).joined(separator: ",")
            case ("watch", 1):
                let changes = client.collection(arguments[0], of: Note.self).changes()
                watchers.append(Task {
                    do {
                        for try await change in changes {
                            TwoPhones.say("change \(change.id) \(change.value?.text ?? "(deleted)")")
                        }
                    } catch {
                        TwoPhones.say("error the watch ended: \(error)")
                    }
                })
                let deadline = Date().addingTimeInterval(30)
                while !changes.isLive {
                    guard Date() < deadline else { return "error not live within 30 s" }
                    try await Task.sleep(for: .milliseconds(20))
                }
                return "watching"
            case ("put", 3):
                let saved = try await client.collection(arguments[0], of: Note.self).put(Note(text: arguments[2]), id: arguments[1])
                return "put \(saved.id) \(saved.version)"
            case ("whoami", 0):
                return "user \(client.user?.id.rawValue ?? "none")"
            default:
                return "error unknown command \(command) with \(arguments.count) arguments"
            }
        }
    }
}
