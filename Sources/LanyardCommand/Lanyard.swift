import ArgumentParser
import Foundation
import LanyardCore
import LanyardEmulator
import LanyardServer
import LanyardStore
import LanyardSupport
import LanyardWire
import Logging

@main
struct Lanyard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lanyard",
        abstract: "A self-hostable identity server for native apps (Sign in with Apple and Google).",
        version: LanyardVersion.current,
        subcommands: [Serve.self, Dev.self, Migrate.self, EmulatorCommand.self, Users.self, GroupsCommand.self, MergesCommand.self, Audit.self, Keys.self, ImportCommand.self,
                      Webhooks.self],
        defaultSubcommand: Serve.self)
}

/// Reads the environment once, and turns a bad setting into one clear line instead of a crash trace.
enum Startup {
    static func configuration(devMode: Bool = false) throws -> LanyardConfiguration {
        do {
            // `lanyard dev` is LANYARD_DEV=1: the rules that depend on dev mode are read with it.
            var environment = ProcessInfo.processInfo.environment
            if devMode { environment["LANYARD_DEV"] = "1" }
            return try LanyardConfiguration.load(environment: environment)
        } catch {
            fail(error)
        }
    }

    static func logger(_ configuration: LanyardConfiguration) -> Logger {
        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = LineLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "lanyard")
    }

    static func runtime(_ configuration: LanyardConfiguration, logger: Logger) async throws -> LanyardRuntime {
        do {
            return try await LanyardRuntime.start(configuration: configuration, logger: logger)
        } catch let error as ConfigurationError {
            fail(error)
        }
    }

    static func fail(_ error: any Error) -> Never {
        FileHandle.standardError.write(Data("lanyard: \(error)\n".utf8))
        Foundation.exit(1)
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server (configured by LANYARD_* variables).")

    func run() async throws {
        let configuration = try Startup.configuration()
        try await ServerRunner.run(configuration, logger: Startup.logger(configuration))
    }
}

struct Dev: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the server with the provider emulator (no Apple or Google account needed).")

    func run() async throws {
        let configuration = try Startup.configuration(devMode: true)
        try await ServerRunner.run(configuration, logger: Startup.logger(configuration))
    }
}

enum ServerRunner {
    static func run(_ configuration: LanyardConfiguration, logger: Logger) async throws {
        // A file grown past the process's size limit fails that write (SQLite answers 503 for it, reference
        // section 8) instead of killing the server.
        signal(SIGXFSZ, SIG_IGN)
        let runtime = try await Startup.runtime(configuration, logger: logger)
        let app = runtime.application { port in
            logger.info("Lanyard listening", metadata: ["address": "\(configuration.host):\(port)",
                                                        "database": "\(configuration.database)",
                                                        "dev": "\(configuration.devMode)"])
            if configuration.devMode {
                // `write(2)`, not `FileHandle.write`: a closed standard output must not stop the server.
                var banner = DevBanner.text(issuer: runtime.issuer)
                _ = banner.withUTF8 { Foundation.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            }
        }
        do {
            try await app.runService()
        } catch {
            await runtime.shutdown()
            throw error
        }
        await runtime.shutdown()
    }
}

enum DevBanner {
    static func text(issuer: String) -> String {
        """

        Lanyard dev mode: the provider emulator is mounted at \(issuer)/_emulator
          Get an Apple-shaped ID token:
            curl -s -X POST \(issuer)/_emulator/apple/id-token -H 'content-type: application/json' \\
                 -d '{"sub": "001", "email": "a@example.com"}'
          Exchange it for a Lanyard session:
            curl -s -X POST \(issuer)/v1/auth/signin/apple -H 'content-type: application/json' \\
                 -d '{"id_token": "<id_token>"}'
          Or: lanyard emulator mint --provider apple --sub 001 --email a@example.com

        """
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply database migrations and exit.")

    func run() async throws {
        let configuration = try Startup.configuration()
        let logger = Startup.logger(configuration)
        let database: any Database
        do {
            database = try await DatabaseFactory.open(configuration.database, poolSize: configuration.databasePoolSize,
                                                 timeout: .seconds(configuration.databaseTimeout), logger: logger)
        } catch {
            Startup.fail(ConfigurationError(variable: "LANYARD_DATABASE_URL", problem: "\(error)"))
        }
        do {
            let applied = try await Migrator(database: database, logger: logger).migrate()
            print(applied.isEmpty ? "Database is up to date." : "Applied migrations: \(applied.map(String.init).joined(separator: ", "))")
            await database.close()
        } catch {
            await database.close()
            Startup.fail(ConfigurationError(variable: "LANYARD_DATABASE_URL", problem: "\(error)"))
        }
    }
}

struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator", abstract: "The provider emulator.", subcommands: [Mint.self])

    struct Mint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print an emulator ID token (verifies against a `lanyard dev` server using the same data directory).")

        @Option(help: "apple, google, or a name of LANYARD_OIDC_PROVIDERS (microsoft, facebook, your own)") var provider: String
        @Option(help: "Microsoft: the token's tenant (tid)") var tenant: String?
        @Option(help: "The provider's user id") var sub: String
        @Option var email: String?
        @Option(help: "The raw nonce or, for Apple-style apps, its SHA-256") var nonce: String?
        @Option(help: "Audience; defaults to the emulator's client ID") var aud: String?
        @Option(help: "Full name (Google tokens carry it)") var name: String?
        @Option(help: "Lifetime in seconds") var expiresIn: Int = 600
        @Flag(help: "Apple: also print an authorization code (single use, five minutes), on a second line")
        var authorizationCode = false

        func run() async throws {
            let configuration = try Startup.configuration(devMode: true)
            let keys = try EmulatorKeys.loadOrCreate(directory: configuration.dataDirectory)
            let minter = TokenMinter(keys: keys, clock: SystemClock())
            guard let emulated = EmulatedProvider(rawValue: provider) else {
                guard let oidc = LanyardRuntime.emulatedOIDCProviders(configuration).first(where: { $0.name == provider }) else {
                    throw ValidationError("--provider must be apple, google or a name of LANYARD_OIDC_PROVIDERS")
                }
                print(try minter.mint(oidc, MintRequest(sub: sub, email: email, nonce: nonce, aud: aud, name: name,
                                                        expiresIn: expiresIn, tid: tenant)))
                return
            }
            print(try minter.mint(emulated, MintRequest(sub: sub, email: email, nonce: nonce, aud: aud, name: name,
                                                        expiresIn: expiresIn)))
            if authorizationCode {
                guard emulated == .apple else { throw ValidationError("--authorization-code is Apple's") }
                print(AppleAccountEmulator.mintCode(keys: keys, clientID: aud ?? emulated.defaultClientID, subject: sub,
                                                    now: Date()))
            }
        }
    }
}

struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Access-token signing keys.", subcommands: [Rotate.self, List.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: """
            Publish a new key now and sign with it after LANYARD_KEY_PUBLISH_DELAY, on every instance; the old key \
            stays published until its tokens expire.
            """)

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let (kid, signsFrom) = try await runtime.keyRing.rotate(publishDelay: runtime.configuration.keyPublishDelay)
                print("Published key \(kid); every instance signs with it from \(Output.time(signsFrom)) UTC.")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The signing keys, what each does now, and their dates.")
        @Flag(help: "Print JSON") var json = false

        func run() async throws {
            try await CommandRuntime.with { runtime in
                let keys = try await runtime.keyRing.describe()
                if json { return try Output.json(keys) }
                Output.table(["KID", "STATE", "CREATED", "SIGNS FROM", "RETIRED", "PUBLISHED UNTIL"], keys.map { key in
                    [key.kid, key.state.rawValue, Output.time(key.createdAt), Output.time(key.signsFrom),
                     key.retiredAt.map(Output.time) ?? "", key.publishedUntil.map(Output.time) ?? ""]
                }, empty: "No keys yet (the first start makes one).")
            }
        }
    }
}
