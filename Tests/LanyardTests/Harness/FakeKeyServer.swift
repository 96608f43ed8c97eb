import Foundation
import Hummingbird
import LanyardEmulator
import LanyardSupport
import Synchronization

/// A provider's key endpoint that a test can break: it serves the emulator's Apple keys, hangs, answers
/// garbage or fails, as told.
final class FakeKeyServer: Sendable {
    enum Mode: Sendable, Equatable {
        case serving, hanging, garbage, failing
        /// 302 to another URL (another host or scheme, or this server's own `/auth/keys-moved`).
        case redirecting(to: String)
    }

    /// What the endpoint does and how often it was asked, shared with its route.
    private final class State: Sendable {
        let mode = Mutex(Mode.serving)
        let fetches = Mutex(0)
    }

    private let state = State()
    let url: String
    private let application: LocalApplication

    var fetchCount: Int { state.fetches.withLock { $0 } }

    func set(_ mode: Mode) { state.mode.withLock { $0 = mode } }

    init(keys: EmulatorKeys) async throws {
        let port = try freeLoopbackPort()
        url = "http://127.0.0.1:\(port)/auth/keys"
        let router = Router()
        let jwks = try JSONEncoder().encode(TokenMinter(keys: keys, clock: SystemClock()).jwks(for: .apple))
        let state = self.state
        router.get("auth/keys") { _, _ -> Response in
            state.fetches.withLock { $0 += 1 }
            switch state.mode.withLock({ $0 }) {
            case .serving:
                return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "max-age=1"],
                                body: .init(byteBuffer: ByteBuffer(bytes: jwks)))
            case .hanging:
                // Up to 30 s, or until the test changes the mode (so stopping the server does not wait for it).
                for _ in 0..<300 where state.mode.withLock({ $0 }) == .hanging { try await Task.sleep(for: .milliseconds(100)) }
                return Response(status: .ok)
            case .garbage:
                return Response(status: .ok, headers: [.contentType: "application/json"],
                                body: .init(byteBuffer: ByteBuffer(string: "<html>not keys</html>")))
            case .failing:
                return Response(status: .internalServerError)
            case .redirecting(let target):
                return Response(status: .found, headers: [.location: target])
            }
        }
        router.get("auth/keys-moved") { _, _ -> Response in
            state.fetches.withLock { $0 += 1 }
            return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "max-age=1"],
                            body: .init(byteBuffer: ByteBuffer(bytes: jwks)))
        }
        application = try await LocalApplication(router: router, port: port, label: "the fake key server")
    }

    func stop() async {
        set(.failing)
        await application.stop()
    }
}
