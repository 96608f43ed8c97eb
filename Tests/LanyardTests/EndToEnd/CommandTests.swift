import AsyncHTTPClient
import Foundation
import Testing
import LanyardWire

/// The `lanyard` command as an operator runs it: a separate process, real signals.
@Suite struct CommandTests {
    /// The `lanyard` executable built beside this test bundle.
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("lanyard")
    }

    static func launch(_ arguments: [String], environment: [String: String]) throws -> ChildProcess {
        try ChildProcess(executable: executable.path, arguments: arguments,
                         environment: environment.merging(["PATH": "/usr/bin:/bin"]) { $1 })
    }

    /// Polls `/healthz` for up to a minute (a debug build starting on a busy machine is slow).
    static func waitUntilHealthy(port: Int) async throws -> Bool {
        for _ in 0..<1200 {
            try await Task.sleep(for: .milliseconds(50))
            let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/healthz")
            if let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(2)), response.status == .ok {
                return true
            }
        }
        return false
    }

    static func waitForExit(_ process: ChildProcess, seconds: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        return !process.isRunning
    }

    @Test(arguments: [
        ("LANYARD_PORT", "eighty"),
        ("LANYARD_DATABASE_URL", "postgres://u:p@127.0.0.1:1/db"),  // unreachable
        ("LANYARD_MASTER_KEY", "c2hvcnQ="),
        ("LANYARD_REFRESH_TOKEN_TTL", "30 days"),
        ("LANYARD_ADMIN_KEY", "k"),
        ("LANYARD_ADMIN_KEY", String(repeating: "k", count: 31)),
        ("LANYARD_CORS_ORIGINS", "*"),
        ("LANYARD_CORS_ORIGINS", "https://app.example.com/path"),
        ("LANYARD_TEST_PAUSE_AT", "merge.before_commit"),  // outside dev mode
    ])
    func aBadSettingStopsStartUpWithOneLineNamingIt(variable: String, value: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-cmd-\(UUID().uuidString)").path
        var environment = ["LANYARD_DATA_DIR": directory, "LANYARD_DATABASE_URL": "sqlite:\(directory)/db.sqlite",
                           "LANYARD_MASTER_KEY": Data(repeating: 3, count: 32).base64EncodedString()]
        environment[variable] = value
        let process = try Self.launch(["serve"], environment: environment)
        #expect(await Self.waitForExit(process, seconds: 20))
        let message = String(decoding: process.standardError.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 1)
        let lines = message.split(separator: "\n")
        #expect(lines.count == 1, "\(message)")
        #expect(lines.first?.hasPrefix("lanyard: \(variable)") == true, "\(message)")
    }

    /// Keys sealed under one master key, the server started with another: one line naming the variable, not a
    /// crypto library's error code.
    @Test func aDifferentMasterKeyIsNamedAtStartUp() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-cmd-\(UUID().uuidString)").path
        let port = try freeLoopbackPort()
        var environment = ["LANYARD_DATA_DIR": directory, "LANYARD_DATABASE_URL": "sqlite:\(directory)/db.sqlite",
                           "LANYARD_MASTER_KEY": Data(repeating: 3, count: 32).base64EncodedString(),
                           "LANYARD_PORT": String(port), "LANYARD_LOG_LEVEL": "error"]
        // The first start stores its signing key; it answers only once the key is in the database.
        let first = try Self.launch(["serve"], environment: environment)
        #expect(try await Self.waitUntilHealthy(port: port))
        first.terminate()
        #expect(await Self.waitForExit(first, seconds: 30))

        environment["LANYARD_MASTER_KEY"] = Data(repeating: 4, count: 32).base64EncodedString()
        let second = try Self.launch(["serve"], environment: environment)
        let exited = await Self.waitForExit(second, seconds: 20)
        #expect(exited)
        if !exited {
            second.terminate()
            _ = await Self.waitForExit(second, seconds: 30)
        }
        let message = String(decoding: second.standardError.readDataToEndOfFile(), as: UTF8.self)
        #expect(second.terminationStatus == 1)
        #expect(message.split(separator: "\n").count == 1, "\(message)")
        #expect(message.hasPrefix("lanyard: LANYARD_MASTER_KEY"), "\(message)")
        #expect(message.contains("not the master key they were stored with"), "\(message)")
    }

    /// The administration commands on each database, as an operator runs them: what they print arrives, and they
    /// exit cleanly, whether the runtime they open does the work or fails to start after opening the database
    /// (here: another master key). On PostgreSQL a connection left open at exit stops a debug build (postgres-nio
    /// asserts that none is freed open): a start that failed after the pool opened used to, with status 132 and
    /// neither the message nor the output.
    @Test(arguments: TestDatabase.available)
    func administrationCommandsPrintTheirOutputAndCloseTheDatabase(database: TestDatabase) async throws {
        let (url, cleanup) = try await database.makeFresh()
        defer { Task { await cleanup() } }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-cmd-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var environment = ["LANYARD_DATA_DIR": directory, "LANYARD_DATABASE_URL": url,
                           "LANYARD_MASTER_KEY": Data(repeating: 3, count: 32).base64EncodedString(),
                           "LANYARD_LOG_LEVEL": "warning"]
        func run(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
            let process = try Self.launch(arguments, environment: environment)
            let exited = await Self.waitForExit(process, seconds: 60)
            if !exited {
                process.terminate()
                _ = await Self.waitForExit(process, seconds: 30)
            }
            #expect(exited, "lanyard \(arguments.joined(separator: " ")) did not exit")
            return (process.terminationStatus, String(decoding: process.standardOutput.readDataToEndOfFile(), as: UTF8.self),
                    String(decoding: process.standardError.readDataToEndOfFile(), as: UTF8.self))
        }

        let fixture = ImportFormatTests.fixtures.appendingPathComponent("firebase-list-users.json").path
        let imported = try await run(["import", "firebase", fixture])
        #expect(imported.status == 0, "\(imported.errors)")
        #expect(imported.output.contains("Created 10 accounts"), "\(imported.output)")
        #expect(imported.errors.isEmpty, "\(imported.errors)")

        let listed = try await run(["users", "list"])
        #expect(listed.status == 0, "\(listed.errors)")
        #expect(listed.output.split(separator: "\n").count == 11, "\(listed.output)")
        #expect(listed.output.contains("Elif Kaya"), "\(listed.output)")
        #expect(listed.errors.isEmpty, "\(listed.errors)")

        let batches = try await run(["import", "list"])
        #expect(batches.status == 0, "\(batches.errors)")
        #expect(batches.output.contains("firebase-list-users"), "\(batches.output)")

        // Opens the database, then cannot decrypt the signing keys stored under the first key.
        environment["LANYARD_MASTER_KEY"] = Data(repeating: 4, count: 32).base64EncodedString()
        let refused = try await run(["users", "list"])
        #expect(refused.status == 1, "\(refused.errors)")
        #expect(refused.errors.split(separator: "\n").count == 1, "\(refused.errors)")
        #expect(refused.errors.hasPrefix("lanyard: LANYARD_MASTER_KEY"), "\(refused.errors)")
    }

    /// One version, in one place: the command, the OpenAPI document and the CHANGELOG's newest heading agree.
    @Test func theVersionIsTheSameEverywhere() async throws {
        let process = try Self.launch(["--version"], environment: [:])
        #expect(await Self.waitForExit(process, seconds: 20))
        let printed = String(decoding: process.standardOutput.readDataToEndOfFile(), as: UTF8.self)
        #expect(printed.trimmingCharacters(in: .whitespacesAndNewlines) == LanyardVersion.current)
        #expect(process.terminationStatus == 0)

        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let changelog = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let newest = changelog.split(separator: "\n").first { $0.hasPrefix("## ") }
        #expect(newest?.hasPrefix("## \(LanyardVersion.current) ") == true, "\(newest ?? "")")
        try await TestServer.with(.sqlite) { server in
            let info = try await server.get("/openapi.json").json["info"] as? [String: Any]
            #expect(info?["version"] as? String == LanyardVersion.current)
        }
    }

    @Test func theServerStopsGracefullyOnSIGTERM() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-cmd-\(UUID().uuidString)").path
        let port = try freeLoopbackPort()
        let process = try Self.launch(["dev"], environment: [
            "LANYARD_PORT": String(port), "LANYARD_DATA_DIR": directory,
            "LANYARD_DATABASE_URL": "sqlite:\(directory)/db.sqlite", "LANYARD_LOG_LEVEL": "error",
        ])
        #expect(try await Self.waitUntilHealthy(port: port))
        // The generated master key, the database and SQLite's log and shared-memory files are private to their
        // owner, in a folder only its owner can enter, whatever the umask.
        func mode(_ path: String) throws -> Int? {
            try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        }
        #expect(try mode(directory) == 0o700)
        for file in ["master.key", "db.sqlite", "db.sqlite-wal", "db.sqlite-shm"] {
            #expect(try mode("\(directory)/\(file)") == 0o600, "\(file)")
        }
        process.terminate()  // SIGTERM
        #expect(await Self.waitForExit(process, seconds: 30))
        #expect(process.exitedNormally)
        #expect(process.terminationStatus == 0)
    }
}
