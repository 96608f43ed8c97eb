import Foundation
import LanyardStore
import LanyardSupport

/// The page a mail's link opens (`/e/{token}`, reference section 18). Looking at it changes nothing (mail
/// scanners open links); confirming it needs the number shown on the device that asked, picked out of three, and
/// only lets that device finish: the browser gets no session.
public struct EmailLinks: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// What the page shows.
    public enum View: Sendable, Equatable {
        /// "Sign in on the device that asked at …?": the numbers to pick from and what is known of that device.
        case confirm(choices: [Int], intent: String, requestedAt: Date, clientIP: String?, userAgent: String?)
        /// The link can no longer be used: `used`, `expired`, `flow_dead`, `undeliverable`, or `unknown`.
        case unusable(reason: String)
    }

    /// After a pick.
    public enum Confirmation: Sendable, Equatable {
        /// Confirmed; the browser goes to the flow's `redirect_to` with `?flow_id=`, or is told to return to its device.
        case confirmed(redirect: String?)
        /// Not the number the device shows; `attemptsLeft` picks (or codes) remain.
        case wrongNumber(attemptsLeft: Int)
        case unusable(reason: String)
    }

    public func view(token: String) async throws -> View {
        guard let flow = try await flow(token: token) else { return .unusable(reason: "unknown") }
        if let reason = EmailFlowRules.refusal(flow, at: dependencies.clock.now()) { return .unusable(reason: reason) }
        if flow.confirmedAt != nil { return .unusable(reason: "used") }
        return .confirm(choices: dependencies.emailSecrets.choices(flowID: flow.id, match: flow.match), intent: flow.intent,
                        requestedAt: flow.createdAt, clientIP: flow.clientIP, userAgent: flow.userAgent)
    }

    public func confirm(token: String, picked: Int?) async throws -> Confirmation {
        guard let flow = try await flow(token: token) else { return .unusable(reason: "unknown") }
        let now = dependencies.clock.now()
        if let reason = EmailFlowRules.refusal(flow, at: now) { return .unusable(reason: reason) }
        guard picked == flow.match else {
            // A wrong pick counts like a wrong code: guessing one in three cannot be repeated.
            let counted = try await dependencies.database.transaction { connection in
                try await EmailFlowStore(connection).recordWrongCode(id: flow.id)
            }
            guard let counted else { return .unusable(reason: "used") }
            let left = max(0, EmailFlowRules.maxWrongCodes - counted)
            return left == 0 ? .unusable(reason: "flow_dead") : .wrongNumber(attemptsLeft: left)
        }
        let confirmed = try await dependencies.database.transaction { connection in
            try await EmailFlowStore(connection).confirm(id: flow.id, at: now)
        }
        guard confirmed || flow.confirmedAt != nil else { return .unusable(reason: "used") }
        return .confirmed(redirect: flow.redirectTo.map { Self.redirect($0, flowID: flow.id) })
    }

    private func flow(token: String) async throws -> EmailFlowRecord? {
        guard token.count == 43, token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            return nil
        }
        let hash = dependencies.emailSecrets.linkHash(token)
        return try await dependencies.database.read { connection in
            try await EmailFlowStore(connection).find(linkHash: hash)
        }
    }

    /// `redirect_to` with `flow_id` added to its query.
    static func redirect(_ url: String, flowID: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "flow_id", value: flowID)]
        return components.string ?? url
    }
}
