import Foundation

/// A PostgreSQL server of a test's own (`scripts/start-test-postgres` on another port), which the test may stop
/// and start again while Lanyard runs against it: the shared one serves the rest of the suite meanwhile.
/// Available where the suite's PostgreSQL is (`LANYARD_TEST_POSTGRES_URL`).
struct DisposablePostgres: Sendable {
    let url: String
    let dataDirectory: String

    static var scripts: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts")
    }

    static func start() throws -> DisposablePostgres {
        // Below the ephemeral range, as the shared server's port; a port another test run holds fails to start.
        for _ in 1...5 {
            let port = Int.random(in: 26000..<28000)
            let output = try Self.run("start-test-postgres", environment: ["LANYARD_TEST_POSTGRES_PORT": String(port)])
            guard output.status == 0 else { continue }
            var values: [String: String] = [:]
            for line in output.text.split(separator: "\n") where line.hasPrefix("export ") {
                let pair = line.dropFirst(7).split(separator: "=", maxSplits: 1)
                if pair.count == 2 { values[String(pair[0])] = String(pair[1]).trimmingCharacters(in: CharacterSet(charactersIn: "'")) }
            }
            guard let url = values["LANYARD_TEST_POSTGRES_URL"], let data = values["LANYARD_TEST_POSTGRES_DATA"] else {
                throw TestSetupError("start-test-postgres printed no URL: \(output.text)")
            }
            return DisposablePostgres(url: url, dataDirectory: data)
        }
        throw TestSetupError("could not start a PostgreSQL server of the test's own")
    }

    /// Stops the server at once, cutting its connections (`pg_ctl stop -m fast`).
    func stop() throws { try control("stop") }

    /// Starts it again, with the same data and port.
    func restart() throws { try control("start") }

    /// Stops it and deletes its data.
    func remove() {
        _ = try? Self.run("stop-test-postgres", environment: ["LANYARD_TEST_POSTGRES_DATA": dataDirectory])
    }

    private func control(_ action: String) throws {
        let output = try Self.run("test-postgres-ctl", arguments: [action], environment: ["LANYARD_TEST_POSTGRES_DATA": dataDirectory])
        guard output.status == 0 else { throw TestSetupError("test-postgres-ctl \(action) failed: \(output.text)") }
    }

    private static func run(_ script: String, arguments: [String] = [],
                            environment: [String: String]) throws -> (status: Int32, text: String) {
        let process = try ChildProcess(executable: "/bin/bash", arguments: [scripts.appendingPathComponent(script).path] + arguments,
                                       environment: environment.merging(["PATH": "/usr/local/bin:/usr/bin:/bin"]) { $1 })
        let text = String(decoding: process.standardOutput.readDataToEndOfFile(), as: UTF8.self)
        _ = process.standardError.readDataToEndOfFile()
        while process.isRunning { usleep(10_000) }
        return (process.terminationStatus, text)
    }
}
