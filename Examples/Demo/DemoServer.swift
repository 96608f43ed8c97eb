import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `lanyard dev` the demo talks to: one already running, or one it starts on a temporary database.
struct DemoServer: Sendable {
    let url: URL
    private let process: Process?
    private let folder: URL?

    static func reachOrStart() async throws -> DemoServer {
        let url = URL(string: ProcessInfo.processInfo.environment["LANYARD_URL"] ?? "http://127.0.0.1:8080")!
        if await hasEmulator(url) {
            print("Using the lanyard dev server at \(url.absoluteString)")
            return DemoServer(url: url, process: nil, folder: nil)
        }
        let port = ProcessInfo.processInfo.environment["LANYARD_DEMO_PORT"] ?? "18080"
        let own = URL(string: "http://127.0.0.1:\(port)")!
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lanyard-demo-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let binary = try lanyardBinary()
        print("No lanyard dev server at \(url.absoluteString); starting one at \(own.absoluteString) on \(folder.path)")
        let process = Process()
        process.executableURL = binary
        process.arguments = ["dev"]
        var environment = ProcessInfo.processInfo.environment
        environment["LANYARD_PORT"] = port
        environment["LANYARD_DATABASE_URL"] = "sqlite:" + folder.appendingPathComponent("demo.sqlite").path
        environment["LANYARD_DATA_DIR"] = folder.path
        environment["LANYARD_LOG_LEVEL"] = "warning"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let server = DemoServer(url: own, process: process, folder: folder)
        for _ in 0..<300 {
            if await hasEmulator(own) { return server }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        server.stop()
        throw DemoError("lanyard dev did not start at \(own.absoluteString)")
    }

    func stop() {
        guard let process else { return }
        process.terminate()
        process.waitUntilExit()
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    /// The emulator answers only in dev mode.
    private static func hasEmulator(_ url: URL) async -> Bool {
        var request = URLRequest(url: url.appendingPathComponent("_emulator/apple/keys"), timeoutInterval: 2)
        request.httpMethod = "GET"
        guard let (_, response) = try? await URLSession.shared.data(for: request) else { return false }
        return (response as? HTTPURLResponse)?.statusCode == 200
    }

    /// `lanyard` beside this program in the build folder, built first when it is not there yet.
    private static func lanyardBinary() throws -> URL {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let binary = folder.appendingPathComponent("lanyard")
        if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        print("Building the lanyard server (swift build --product lanyard)…")
        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        build.arguments = ["swift", "build", "--product", "lanyard"]
        try build.run()
        build.waitUntilExit()
        guard build.terminationStatus == 0, FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw DemoError("could not build lanyard (run `swift build --product lanyard` in the package folder)")
        }
        return binary
    }
}
