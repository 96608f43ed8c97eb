import Foundation
import LanyardStore
import LanyardSupport

/// The page a mail's link opens (`/e/{token}`, reference sections 18 and 25). Looking at it changes nothing (mail
/// scanners open links); confirming it needs the number the device that asked shows, typed in, and only lets that
/// device finish: the browser gets no session. Each link takes one number: a wrong one ends the link (the code in
/// the mail keeps its own tries), so neither a guess nor a scanner pressing every button can confirm it.
public struct EmailLinks: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    /// What the page shows.
    public enum View: Sendable, Equatable {
        /// "Sign in on the device that asked at …?": what is known of that device, and where a confirmed browser
        /// goes (the page's policy must allow it).
        case confirm(Request)
        /// The link can no longer be used: `used`, `expired`, `flow_dead`, `undeliverable`, `link_ended` or
        /// `unknown`.
        case unusable(reason: String)
    }

    /// The flow as its confirm page describes it.
    public struct Request: Sendable, Equatable {
        public var intent: String
        public var requestedAt: Date
        public var clientIP: String?
        public var userAgent: String?
        public var redirectTo: String?
    }

    /// After a number was typed.
    public enum Confirmation: Sendable, Equatable {
        /// Confirmed; the browser goes to the flow's `redirect_to` with `?flow_id=`, or is told to return to its device.
        case confirmed(redirect: String?)
        /// Nothing readable as a number was sent (an empty or malformed form): nothing changed.
        case unreadable(Request)
        /// Not the number the device shows: the link is ended; the code in the mail still works.
        case linkEnded
        case unusable(reason: String)
    }

    public func view(token: String) async throws -> View {
        guard let flow = try await flow(token: token) else { return .unusable(reason: "unknown") }
        if let reason = Self.refusal(flow, at: dependencies.clock.now()) { return .unusable(reason: reason) }
        return .confirm(Self.request(flow))
    }

    public func confirm(token: String, typed: String?) async throws -> Confirmation {
        guard let flow = try await flow(token: token) else { return .unusable(reason: "unknown") }
        let now = dependencies.clock.now()
        let number = typed.flatMap(EmailFlowRules.typedMatch)
        // The same right number again (a double click, a reload): the browser goes where the first one went.
        if flow.confirmedAt != nil, number == flow.match, EmailFlowRules.refusal(flow, at: now) == nil {
            return .confirmed(redirect: flow.redirectTo.map { Self.redirect($0, flowID: flow.id) })
        }
        if let reason = Self.refusal(flow, at: now) { return .unusable(reason: reason) }
        guard let number else { return .unreadable(Self.request(flow)) }
        guard number == flow.match else {
            let ended = try await dependencies.database.transaction { connection in
                try await EmailFlowStore(connection).endLink(id: flow.id, at: now)
            }
            // Another request confirmed or ended it first: say what it is now.
            return ended ? .linkEnded : try await settled(token: token)
        }
        let confirmed = try await dependencies.database.transaction { connection in
            try await EmailFlowStore(connection).confirm(id: flow.id, at: now)
        }
        guard confirmed else { return try await settled(token: token) }
        dependencies.signals.emailFlowConfirmed(flow.id)
        return .confirmed(redirect: flow.redirectTo.map { Self.redirect($0, flowID: flow.id) })
    }

    /// The link's state after a racing request changed it.
    private func settled(token: String) async throws -> Confirmation {
        if case .unusable(let reason) = try await view(token: token) { return .unusable(reason: reason) }
        return .unusable(reason: "used")
    }

    /// Why the link's page cannot confirm this flow, or nil while it can: the flow's own refusal, then a link that
    /// was confirmed (`used`) or ended by a wrong number (`link_ended`).
    static func refusal(_ flow: EmailFlowRecord, at now: Date) -> String? {
        if let reason = EmailFlowRules.refusal(flow, at: now) { return reason }
        if flow.confirmedAt != nil { return "used" }
        if flow.linkEndedAt != nil { return "link_ended" }
        return nil
    }

    static func request(_ flow: EmailFlowRecord) -> Request {
        Request(intent: flow.intent, requestedAt: flow.createdAt, clientIP: flow.clientIP, userAgent: flow.userAgent,
                redirectTo: flow.redirectTo)
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
