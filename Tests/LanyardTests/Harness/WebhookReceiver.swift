import Foundation
import Hummingbird
import Synchronization

/// A real HTTP receiver for webhooks: it records every delivery and answers as the test tells it.
final class WebhookReceiver: Sendable {
    struct Delivery: Sendable {
        let id: String
        let timestamp: String
        let signature: String
        let body: String

        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:] }
        var type: String { json["type"] as? String ?? "" }
        var data: [String: String] { json["data"] as? [String: String] ?? [:] }
    }

    private final class State: Sendable {
        let deliveries = Mutex<[Delivery]>([])
        /// Statuses to answer, first first; 200 once they are used up. 0 means: do not answer (for up to 5 s).
        let answers = Mutex<[Int]>([])
    }

    private let state = State()
    let url: String
    private let application: LocalApplication

    var deliveries: [Delivery] { state.deliveries.withLock { $0 } }

    /// The next deliveries are answered with these statuses.
    func answer(_ statuses: [Int]) { state.answers.withLock { $0 = statuses } }

    init() async throws {
        let port = try freeLoopbackPort()
        url = "http://127.0.0.1:\(port)/hooks"
        let router = Router()
        let state = self.state
        router.post("hooks") { request, _ -> Response in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            state.deliveries.withLock {
                $0.append(Delivery(id: request.headers[.init("webhook-id")!] ?? "",
                                   timestamp: request.headers[.init("webhook-timestamp")!] ?? "",
                                   signature: request.headers[.init("webhook-signature")!] ?? "",
                                   body: String(buffer: body)))
            }
            let status = state.answers.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
            if status == 0 {
                try? await Task.sleep(for: .seconds(5))
                return Response(status: .ok)
            }
            return Response(status: .init(code: status))
        }
        application = try await LocalApplication(router: router, port: port, label: "the webhook receiver")
    }

    func waitFor(_ count: Int) async throws -> [Delivery] {
        _ = try await eventually { deliveries.count >= count }
        return deliveries
    }

    func stop() async {
        await application.stop()
    }
}
