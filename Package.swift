// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

/// The load generator (`lanyard-bench`), its parts and their tests are built only when asked:
/// `LANYARD_BENCHMARKS=1 swift build|test` (`Benchmarks/run.sh` and `.ci/run` ask). Without it they are not in
/// the package graph, and an app or a server that depends on Lanyard never builds them.
let benchmarks = Context.environment["LANYARD_BENCHMARKS"] == "1"

let package = Package(
    name: "lanyard",
    // One list for the package: the server needs macOS 14 (Hummingbird); the SDK alone would run on macOS 13.
    platforms: [.macOS(.v14), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .executable(name: "lanyard", targets: ["LanyardCommand"]),
        // The client SDK for apps: Foundation only, so an app that depends on it builds none of the server's packages.
        .library(name: "Lanyard", targets: ["Lanyard"]),
        .library(name: "LanyardServer", targets: ["LanyardServer"]),
        .executable(name: "lanyard-demo", targets: ["LanyardDemo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // TLS for SMTP (STARTTLS and implicit TLS); already built for PostgreSQL and the HTTP client.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // `swift package generate-documentation --target Lanyard`: the SDK's documentation (DocC).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // Tests only: the differential test of our JWS code against Vapor's (`JOSEDifferentialTests`).
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
    ],
    targets: [
        // The contract's request and response types (DESIGN sections 3, 5 and 7): Foundation-only `Codable` values
        // the server builds its answers from, the SDK sends and reads, and the tests decode.
        .target(
            name: "LanyardWire",
            swiftSettings: swiftSettings
        ),
        // The system SQLite (Debian's libsqlite3-dev), bound directly: statements are prepared once and run in place.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Configuration, clock, JOSE primitives: what every other module shares.
        .target(
            name: "LanyardSupport",
            dependencies: [
                "LanyardWire",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // ID-token verification of every configured provider, JWKS cache, WebAuthn checks.
        .target(
            name: "LanyardProviders",
            dependencies: [
                "LanyardSupport", "LanyardWire",
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // SQL for SQLite and PostgreSQL, migrations, transactions.
        .target(
            name: "LanyardStore",
            dependencies: [
                "LanyardSupport",
                "CSQLite",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Accounts, identities, sessions, linking and merge rules; the error catalogue.
        .target(
            name: "LanyardCore",
            dependencies: [
                "LanyardSupport", "LanyardStore", "LanyardProviders", "LanyardWire",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Mail: an SMTP client that insists on TLS, and the MIME text of a mail.
        .target(
            name: "LanyardMail",
            dependencies: [
                "LanyardSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // Fake identity providers (Apple, Google, OpenID Connect) for dev mode and tests.
        .target(
            name: "LanyardEmulator",
            dependencies: ["LanyardSupport"],
            swiftSettings: swiftSettings
        ),
        // HTTP routes, middleware, OpenAPI, wiring.
        .target(
            name: "LanyardServer",
            dependencies: [
                "LanyardSupport", "LanyardStore", "LanyardProviders", "LanyardCore", "LanyardEmulator", "LanyardWire",
                "LanyardMail",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            resources: [.copy("Resources/openapi.json"), .copy("Resources/emulator.html"), .copy("Resources/passkeys.html"), .copy("Resources/console"),
                        .copy("Resources/sdk")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "LanyardCommand",
            dependencies: [
                "LanyardServer", "LanyardSupport", "LanyardStore", "LanyardEmulator", "LanyardCore", "LanyardWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The client SDK (DESIGN section 9): Foundation only; its models are the wire types it re-exports.
        .target(
            name: "Lanyard",
            dependencies: ["LanyardWire"],
            swiftSettings: swiftSettings
        ),
        // The seeds' stories told through the SDK against `lanyard dev` (`swift run lanyard-demo`).
        .executableTarget(
            name: "LanyardDemo",
            dependencies: ["Lanyard"],
            path: "Examples/Demo",
            swiftSettings: swiftSettings
        ),
        // README's SwiftUI settings screen, compiled where SwiftUI exists (empty elsewhere).
        .target(
            name: "LanyardSwiftUIExample",
            dependencies: ["Lanyard"],
            path: "Examples/SwiftUI",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LanyardTests",
            dependencies: [
                "LanyardServer", "LanyardSupport", "LanyardStore", "LanyardProviders", "LanyardCore", "LanyardEmulator",
                "Lanyard", "LanyardWire", "LanyardMail",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ] + (benchmarks ? ["LanyardBenchKit"] : []),
            // The load generator's tests (`Benchmarks/`) come with it.
            exclude: benchmarks ? [] : ["Benchmarks"],
            swiftSettings: swiftSettings
        ),
    ]
)

if benchmarks {
    package.targets += [
        // The load generator's parts (Benchmarks/, BENCHMARKS.md): HTTP on the wire, the closed loop, the
        // scenarios and their statistics; a library so the tests can run them against a real server.
        .target(
            name: "LanyardBenchKit",
            dependencies: [
                "LanyardSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/Sources/LanyardBenchKit",
            swiftSettings: swiftSettings
        ),
        // Load generator and micro-benchmarks, from the command line; loopback only.
        .executableTarget(
            name: "lanyard-bench",
            dependencies: [
                "LanyardSupport", "LanyardCore", "LanyardWire", "LanyardBenchKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Benchmarks/Sources/lanyard-bench",
            swiftSettings: swiftSettings
        ),
    ]
}
